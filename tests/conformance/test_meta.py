"""Meta-tests tying the registries to the conformance declarations: every kernel is checked against TF,
every op TF differentiates is differentiable here (or says why not), every declaration is usable."""
from __future__ import annotations

import pytest

from tests.conformance import golden
from tests.conformance.cases import family_cases, family_specs
from tests.conformance.check import cases_by_op, golden_families
from tfops_py.conformance import divergences, families, spec_of, specs
from tfops_py.conformance import tf_registry
from tfops_py.framework.op_def import has_op_def, tensorflow_version
from tfops_py.gradients import registered_gradient_ops
from tfops_py.kernels.registry import find_kernel, registered_kernel_ops

# Kernel modules whose tests have not moved onto the conformance harness yet (their own test files and
# golden formats still check them).  Shrinks to nothing; a module is removed when its family moves.
NOT_YET_DECLARED = frozenset({
    "tfops_py.kernels.array.array_ops", "tfops_py.kernels.array.fill_ops", "tfops_py.kernels.array.grad_scatter_ops",
    "tfops_py.kernels.array.grad_support_ops", "tfops_py.kernels.array.graph_io", "tfops_py.kernels.array.shape_ops",
    "tfops_py.kernels.array.slicing_ops", "tfops_py.kernels.nn.activation_grad_ops",
    "tfops_py.kernels.nn.conv_pool_grad_ops", "tfops_py.kernels.nn.conv_pool_ops", "tfops_py.kernels.nn.depthwise_conv",
    "tfops_py.kernels.nn.fractional_pool", "tfops_py.kernels.nn.loss_ops", "tfops_py.kernels.nn.nn_ops",
    "tfops_py.kernels.quantization.fake_quant", "tfops_py.kernels.resources.state_ops",
"tfops_py.kernels.resources.resource_variable_ops",
    "tfops_py.kernels.resources.lookup_ops", "tfops_py.kernels.io.save_restore_ops",
    "tfops_py.kernels.nn.fused_ops",  # tests/kernels/test_fused_ops.py: against the unfused ops and TF
    "tfops_py.kernels.io.summary_ops",  # tests/summary: bytes and event files against TF's
})


def _module(op: str) -> str:
    fn = find_kernel(op, "") or find_kernel(op, "numpy")
    return fn.__module__ if fn is not None else ""


def _undeclared() -> list[str]:
    return sorted(op for op in registered_kernel_ops() if spec_of(op) is None)


def test_every_kernel_has_conformance_cases():
    missing = [op for op in _undeclared() if _module(op) not in NOT_YET_DECLARED]
    assert not missing, f"kernels without conformance(...) next to them: {missing}"
    no_cases = sorted(op for op in specs() if not cases_by_op().get(op))
    assert not no_cases, f"declared but no golden cases (run tools/conformance/gen_golden.py --op X): {no_cases}"


def test_the_not_yet_declared_list_is_current():
    pending = {_module(op) for op in _undeclared()}
    done = sorted(NOT_YET_DECLARED - pending)
    assert not done, f"fully declared now, remove from the list: {done}"


def test_ops_tf_differentiates_are_differentiable_here_or_say_why():
    grads = registered_gradient_ops()
    tf_grads = tf_registry.gradient_ops("cc") | tf_registry.gradient_ops("python")
    missing = []
    for op in sorted(registered_kernel_ops() & tf_grads):
        spec = spec_of(op)
        if op in grads or (spec is not None and spec.no_gradient) or (spec is None and _module(op) in NOT_YET_DECLARED):
            continue
        missing.append(op)
    assert not missing, f"TF differentiates these; register a gradient or give conformance(no_gradient=...): {missing}"


def test_no_gradient_reasons_are_needed():
    stale = sorted(op for op, s in specs().items() if s.no_gradient and op in registered_gradient_ops())
    assert not stale, f"registered now, drop no_gradient=: {stale}"


def test_declarations_name_ops_with_kernels():
    assert not [op for op in specs() if op not in registered_kernel_ops()]
    assert not [op for d in divergences() for op in d.ops if not has_op_def(op)]


@pytest.mark.parametrize("family", families())
def test_declarations_turn_into_cases(family):
    """Every spec, hand case and case builder of the family materialises (no TF needed), with unique ids."""
    ids = [c.id for c in family_cases(family)]
    assert len(ids) == len(set(ids)), f"duplicate case ids: {sorted({i for i in ids if ids.count(i) > 1})}"


def test_golden_files_belong_to_families():
    declared = set(families())
    assert set(golden_families()) <= declared, f"golden files of no family: {set(golden_families()) - declared}"
    for family in golden_families():
        ops = {s.op for s in family_specs(family)} | {c.op for c in family_cases(family)}
        strays = sorted({c.op for c in golden.all_cases(family)} - ops)
        assert not strays, f"{family}.npz holds cases of undeclared ops {strays}: regenerate it"


def test_tf_data_matches_the_op_definitions():
    assert tf_registry.tensorflow_version() == tensorflow_version()
    assert {g.tensorflow for g in map(golden.load, golden_families()) if g is not None} <= {tensorflow_version()}
