"""FakeQuantWithMinMax{Args,Vars,VarsPerChannel} and their gradients, bit for bit against TF 2.21.

The golden cases (bit-exact values on both backends, min/max gradients of large inputs summed in
Eigen's order with TF's thread count, TF's errors for bad inputs) are the conformance harness's
(tests/conformance, built in tfops_py/kernels/quantization/_fake_quant_cases.py).  Here: the nudging
tables of TF's own tests; the Eigen summation order of backprop_wrt_min/max against a scalar
re-implementation; every TF validation at build and run time, the CVE inputs and the scalar
input that still aborts TF 2.21; the NumPy fast path on many small chunks against the generic
kernel; live differential tests against tf.raw_ops (marked ``tf``).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conformance.oracle import run_tf
from tests.conformance.tolerances import assert_values
from tests.tf_oracle import raw_op, require_tf, run_isolated
from tests.util import run_op
from tfops_py import DT_FLOAT, ClientSession, Scope, errors, ops
from tfops_py.kernels.quantization import _fake_quant_cases as cases
from tfops_py.kernels.quantization import _fake_quant_impl as fq
from tfops_py.kernels.quantization import fake_quant as kfq

F32 = np.float32
ARGS, ARGS_GRAD = "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxArgsGradient"
VARS, VARS_GRAD = "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsGradient"
PC, PC_GRAD = "FakeQuantWithMinMaxVarsPerChannel", "FakeQuantWithMinMaxVarsPerChannelGradient"
ALL_OPS = (ARGS, ARGS_GRAD, VARS, VARS_GRAD, PC, PC_GRAD)
TINY = np.finfo(F32).tiny


# -- helpers ----------------------------------------------------------------------------------------
def assert_bits(ours: np.ndarray, ref: np.ndarray, what: str = "") -> None:
    """Bit-exact float32: same shape, equal values (NaN where NaN), and the same sign of zero."""
    assert np.asarray(ref).dtype == F32, f"{what}: dtype {np.asarray(ref).dtype}"
    assert_values(ours, ref, "exact", what)


def run(op: str, *inputs: np.ndarray, backend: str = "numpy", **attrs) -> list[np.ndarray]:
    return run_op(getattr(ops, op), *[np.asarray(a, F32) for a in inputs], backend=backend, **attrs)


def run_fed(op: str, *inputs: np.ndarray, **attrs) -> list[np.ndarray]:
    """The op on placeholders of unknown shape: every check happens in the kernel."""
    root = Scope.NewRootScope()
    phs = [ops.Placeholder(root, DT_FLOAT) for _ in inputs]
    node = getattr(ops, op)(root, *phs, **attrs)
    outs = [node.operation.output(i) for i in range(node.operation.num_outputs())]
    feeds = {p: np.asarray(v, F32) for p, v in zip(phs, inputs)}
    return ClientSession(root, fetch_numpy=True).Run(feeds, outs)


@pytest.mark.tf
def test_golden_cases_nudged_bounds_are_tfs():
    """The bounds the golden cases put values on and around are TF's nudged bounds."""
    require_tf()
    cases.check_nudged_bounds(run_tf)


# -- nudging -----------------------------------------------------------------------------------------
# (min, max, num_bits, narrow) -> (nudged_min, nudged_max, scale): the tables of TF's
# compiler/tests/fake_quant_ops_test.py, plus the .5 tie of the zero point (std::round -> 11).
NUDGE_TABLE = [
    ((0.0, 255.0, 8, False), (0.0, 255.0, 1.0)),
    ((0.5, 128.0, 8, False), (0.0, 127.5, 0.5)),
    ((-128.0, -0.5, 8, False), (-127.5, 0.0, 0.5)),
    ((-0.1, 127.4, 8, False), (0.0, 127.5, 0.5)),
    ((0.0, 254.0, 8, True), (0.0, 254.0, 1.0)),
    ((0.1, 127.1, 8, True), (0.0, 127.0, 0.5)),
    ((0.0, 127.0, 7, False), (0.0, 127.0, 1.0)),
    ((-0.3, 2.7, 8, True), (-0.2952756, 2.7047243, 0.011811024)),
    ((-10.5, 244.5, 8, False), (-11.0, 244.0, 1.0)),
]


@pytest.mark.parametrize("args,expected", NUDGE_TABLE)
def test_nudge_table(args, expected):
    p = fq.nudge(*args)
    assert (p.nudged_min, p.nudged_max, p.scale) == tuple(F32(v) for v in expected)


def test_zero_point_tie_rounds_away_from_zero(backend):
    # scale 1, zero point from min exactly 10.5: TF rounds to 11 (banker's rounding would give 10)
    x = np.array([-11.0, -11.5, -10.6, 244.0, 244.4, 0.5, 1.5, -0.5], F32)
    out = run(VARS, x, F32(-10.5), F32(244.5), backend=backend)[0]
    assert_bits(out, np.array([-11, -11, -11, 244, 244, 1, 2, 0], F32))
    dx, dmin, dmax = run(VARS_GRAD, np.ones(3, F32), np.array([-11.0, -10.9999, -11.000001], F32),
                         F32(-10.5), F32(244.5), backend=backend)
    assert_bits(dx, np.array([1, 1, 0], F32))
    assert (dmin, dmax) == (1, 0)


def test_doc_example_gradient_mask(backend):
    # min -0.3, max 2.7, 8 bits narrow nudge to [-0.2952756, 2.7047243]: -0.3 counts for min,
    # 2.7 passes, and the nudged bounds themselves pass (the mask is inclusive)
    lo, hi = F32(-0.2952756), F32(2.7047243)
    x = np.array([-0.3, 2.7, lo, hi, np.nextafter(hi, F32(9))], F32)
    g = np.array([1, 2, 4, 8, 16], F32)
    dx, dmin, dmax = run(VARS_GRAD, g, x, F32(-0.3), F32(2.7), backend=backend, narrow_range=True)
    assert_bits(dx, np.array([0, 2, 4, 8, 0], F32))
    assert (dmin, dmax) == (1, 16)


def test_vars_divides_per_channel_multiplies(backend):
    """Vars computes t / scale, PerChannel t * inv_scale: they differ at some 16-bit inputs, as in TF."""
    x = np.linspace(-1.0, 1.0, 40001, dtype=F32)
    mn, mx = F32(-0.7231), F32(0.9137)
    vars_out = run(VARS, x, mn, mx, backend=backend, num_bits=16)[0]
    pc_out = run(PC, x[:, None], np.array([mn]), np.array([mx]), backend=backend, num_bits=16)[0][:, 0]
    p = fq.nudge(mn, mx, 16, False)
    t = np.maximum(np.minimum(x, p.nudged_max), p.nudged_min) - p.nudged_min
    assert_bits(vars_out, np.floor(t / p.scale - p.quant_zero + F32(0.5)) * p.scale)
    assert_bits(pc_out, np.floor(t * p.inv_scale - p.quant_zero + F32(0.5)) * p.scale)
    assert (vars_out != pc_out).any()


def test_min_equals_max(backend):
    x = np.array([[-1.0, 0.0, 2.0], [3.0, -0.5, 0.25]], F32)
    g = np.array([[1.0, -2.0, np.inf], [4.0, 5.0, -6.0]], F32)
    lo, hi = np.array([0.0, 1.5, -1.0], F32), np.array([0.0, 1.5, 1.0], F32)
    out = run(PC, x, lo, hi, backend=backend)[0]
    assert (out[:, 0] == 0).all() and np.isnan(out[:, 1]).all()  # 0 == 0: zeros; 1.5 == 1.5: NaN (as TF)
    dx, dmin, dmax = run(PC_GRAD, g, x, lo, hi, backend=backend)
    assert_bits(dx[:, 0], g[:, 0])  # passed through
    assert (dmin[0], dmax[0]) == (0, 0)
    assert_bits(run(VARS, x, F32(0), F32(0), backend=backend)[0], np.zeros_like(x))
    dx, dmin, dmax = run(VARS_GRAD, g, x, F32(0), F32(0), backend=backend)
    assert_bits(dx, g)
    assert (dmin, dmax) == (0, 0)


def test_denormals_are_zero_against_a_zero_bound(backend):
    """TF's kernels treat denormal inputs as 0: inside [0, max], where FLT_MIN below 0 is not."""
    den = np.nextafter(F32(0), F32(1))
    x = np.array([-den, -TINY, den, 0.5], F32)
    dx, dmin, _ = run(VARS_GRAD, np.ones(4, F32), x, F32(0), F32(1), backend=backend)
    assert_bits(dx, np.array([1, 0, 1, 1], F32))
    assert dmin == 1


# -- the summation order of backprop_wrt_min / backprop_wrt_max ------------------------------------
def eigen_sum_reference(a: np.ndarray, cost: float, max_threads: int) -> np.float32:
    """Eigen's FullReducer<ThreadPoolDevice> with AVX packets, one value at a time (slow, obvious)."""
    p, leaf = 8, 1024

    def inner(first: int, num: int) -> np.float32:
        if num > p * leaf:
            split = p * -(-(first + -(-num // 2)) // p)
            nl = min(split - first, num)
            acc = F32(0) + inner(first, nl)
            return acc + inner(split, num - nl) if nl < num else acc
        accs = [np.zeros(p, F32) for _ in range(4)]
        start = 0
        if num >= 4 * p:
            start = num // (4 * p) * 4 * p
            for j in range(0, start, 4 * p):
                for k in range(4):
                    accs[k] = accs[k] + a[first + j + k * p:first + j + (k + 1) * p]
            accs[0] = ((accs[0] + accs[1]) + accs[2]) + accs[3]
        vec = num // p * p
        for j in range(start, vec, p):
            accs[0] = accs[0] + a[first + j:first + j + p]
        s = F32(0)
        for j in range(vec, num):
            s = s + a[first + j]
        q = accs[0][:4] + accs[0][4:]
        return s + ((q[0] + q[2]) + (q[1] + q[3]))

    n = len(a)
    threads = fq.eigen_threads(n, cost, max_threads) if n else 1
    if threads == 1:
        return inner(0, n) if n else F32(0)
    block = n // threads
    count = n // block
    shards = [inner(i * block, block) for i in range(count)]
    acc = inner(count * block, n - count * block) if count * block < n else F32(0)
    for s in shards:
        acc = acc + s
    return acc


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_sum_order_matches_eigen_reference(threads, monkeypatch):
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", str(threads))
    rng = np.random.default_rng(threads)
    for n in (0, 1, 7, 8, 31, 32, 33, 100, 1000, 8192, 8193, 30001, 50151, 70003):
        v = (rng.standard_normal((n, 2)) * 10 ** rng.uniform(-4, 4, (n, 2))).astype(F32)
        for cost in (fq.COST_SCALAR, fq.COST_PER_CHANNEL):
            ours = fq.column_sums(np, v, cost)
            ref = np.array([eigen_sum_reference(v[:, j], cost, threads) for j in range(2)], F32)
            assert_bits(ours, ref, f"n={n} cost={cost}")


def test_thread_thresholds():
    # where TF 2.21 switches from one to two threads (measured): 50150 and 44800 values
    assert [fq.eigen_threads(n, fq.COST_SCALAR, 2) for n in (50149, 50150)] == [1, 2]
    assert [fq.eigen_threads(n, fq.COST_PER_CHANNEL, 2) for n in (44799, 44800)] == [1, 2]
    assert fq.eigen_threads(10 ** 9, fq.COST_SCALAR, 16) == 16


# -- the NumPy fast path, forced onto many chunks and work units -------------------------------------
@pytest.mark.parametrize("op", ALL_OPS)
@pytest.mark.parametrize("rows", [9001, 16384])  # leaves with and without a ragged tail
@pytest.mark.parametrize("path", ["streamed", "units"])  # big leaves one by one / small leaves in units
def test_fast_path_on_small_chunks_matches_generic(op, rows, path, monkeypatch):
    monkeypatch.setattr(kfq, "_CHUNK", 96)
    monkeypatch.setattr(kfq, "_STREAM", 96 if path == "streamed" else 10 ** 9)
    monkeypatch.setattr(kfq, "_UNIT", 5000)
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "3")
    rng = np.random.default_rng(7)
    shape = (rows, 3) if op in (PC, PC_GRAD) else (rows, 2)
    x = (rng.standard_normal(shape) * 3).astype(F32)
    x.reshape(-1)[::97] = np.nan
    g = rng.standard_normal(shape).astype(F32)
    g.reshape(-1)[::89] = np.inf
    ins = [x]
    if op.endswith("Gradient"):
        ins = [g, x]
    if op in (VARS, VARS_GRAD):
        ins += [F32(-2.1), F32(1.7)]
    if op in (PC, PC_GRAD):
        ins += [np.array([-2.1, 0.0, 0.0], F32), np.array([1.7, 0.0, 2.5], F32)]
    attrs = {"num_bits": 6, **({"min": -2.1, "max": 1.7} if op in (ARGS, ARGS_GRAD) else {})}
    fast = run(op, *ins, backend="numpy", **attrs)
    generic = run(op, *ins, backend="array_api_strict", **attrs)
    for a, b in zip(fast, generic):
        assert_bits(a, b, op)


def test_cpp_style_attrs_and_members(backend):
    """The seed op as a C++ port writes it: Attrs setters chained, outputs as members."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3, 4)) * 2).astype(F32)
    g = rng.standard_normal((2, 3, 4)).astype(F32)
    lo, hi = np.full(4, -1.5, F32), np.full(4, 2.0, F32)
    root = Scope.NewRootScope()
    cls = ops.FakeQuantWithMinMaxVarsPerChannelGradient
    op = cls(root, ops.Const(root, g), ops.Const(root, x), ops.Const(root, lo), ops.Const(root, hi),
             cls.NumBits(5).NarrowRange(True))
    got = ClientSession(root, backend=backend, fetch_numpy=True).Run(
        [op.backprops_wrt_input, op.backprop_wrt_min, op.backprop_wrt_max])
    want = run(PC_GRAD, g, x, lo, hi, backend=backend, num_bits=5, narrow_range=True)
    for a, b in zip(got, want):
        assert_bits(a, b)


# -- shapes ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 3, 4, 5), (1, 2, 1, 2, 5), (1, 1, 2, 1, 2, 5)])
def test_per_channel_any_rank(shape, backend):
    x = np.random.default_rng(0).standard_normal(shape).astype(F32)
    lo, hi = np.full(5, -1.0, F32), np.full(5, 1.5, F32)
    out = run(PC, x, lo, hi, backend=backend)[0]
    flat = run(PC, x.reshape(-1, 5), lo, hi, backend=backend)[0]
    assert_bits(out, flat.reshape(shape))
    dx, dmin, dmax = run(PC_GRAD, x, x, lo, hi, backend=backend)
    dx2, dmin2, dmax2 = run(PC_GRAD, x.reshape(-1, 5), x.reshape(-1, 5), lo, hi, backend=backend)
    assert_bits(dx, dx2.reshape(shape))
    assert_bits(dmin, dmin2)
    assert_bits(dmax, dmax2)


@pytest.mark.parametrize("shape", [(0,), (0, 4), (3, 0), (2, 0, 4)])
def test_empty_inputs(shape, backend):
    x = np.zeros(shape, F32)
    d = shape[-1]
    lo, hi = np.full(d, -1.0, F32), np.ones(d, F32)
    assert run(PC, x, lo, hi, backend=backend)[0].shape == shape
    dx, dmin, dmax = run(PC_GRAD, x, x, lo, hi, backend=backend)
    assert dx.shape == shape
    assert_bits(dmin, np.zeros(d, F32))
    assert_bits(dmax, np.zeros(d, F32))
    assert run(VARS, x, F32(-1), F32(1), backend=backend)[0].shape == shape
    assert run(ARGS, x, backend=backend)[0].shape == shape
    dx, dmin, dmax = run(VARS_GRAD, x, x, F32(-1), F32(1), backend=backend)
    assert dx.shape == shape and (dmin, dmax) == (0, 0)


def _inferred(op: str, *shapes, **attrs) -> list:
    root = Scope.NewRootScope()
    phs = [ops.Placeholder(root, DT_FLOAT, ops.Placeholder.Shape(s)) for s in shapes]
    node = getattr(ops, op)(root, *phs, **attrs)
    return [str(node.operation.output(i).shape()) for i in range(node.operation.num_outputs())]


def test_shape_inference():
    assert _inferred(VARS_GRAD, [-1, 3], [2, -1], [], []) == ["[2,3]", "[]", "[]"]
    assert _inferred(PC_GRAD, [-1, -1], [4, -1], [5], [-1]) == ["[4,?]", "[5]", "[5]"]
    assert _inferred(PC_GRAD, [2, 1, 1, 1, 3], [2, 1, 1, 1, 3], [3], [3]) == ["[2,1,1,1,3]", "[3]", "[3]"]
    assert _inferred(PC, [2, 7], [-1], [-1]) == ["[2,7]"]
    assert _inferred(ARGS_GRAD, [-1, 4], [3, -1]) == ["[3,4]"]


# -- validation: TF's checks, errors and CVE inputs ---------------------------------------------------
Z = np.zeros
INVALID = [  # (op, inputs, attrs, message)
    (ARGS, [Z(3)], {"num_bits": 1}, "num_bits must be between 2 and 16, inclusive, but is 1"),
    (ARGS_GRAD, [Z(3), Z(3)], {"num_bits": 17}, "num_bits must be between 2 and 16, inclusive"),
    (VARS, [Z(3), F32(0), F32(1)], {"num_bits": 0}, "num_bits must be between 2 and 16"),
    (VARS_GRAD, [Z(3), Z(3), F32(0), F32(1)], {"num_bits": 20}, "num_bits must be between 2 and 16"),
    (PC, [Z((2, 3)), Z(3), Z(3)], {"num_bits": 17}, "num_bits must be between 2 and 16"),
    (PC_GRAD, [Z((2, 3)), Z((2, 3)), Z(3), Z(3)], {"num_bits": 1}, "num_bits must be between 2 and 16"),
    (ARGS, [Z(3)], {"min": 1.0, "max": 1.0}, "min has to be smaller than max, was: 1 >= 1"),
    (ARGS_GRAD, [Z(3), Z(3)], {"min": 2.0, "max": 1.5}, "min has to be smaller than max, was: 2 >= 1.5"),
    (ARGS_GRAD, [Z(6), Z((3, 2))], {}, "must have the same size and shape.  Input 0: [6] != input 1: [3,2]"),
    (VARS, [Z((2, 3)), Z((2, 3)), Z((2, 3))], {"num_bits": 8}, "`min` must be rank 0 but is rank 2"),  # CVE-2022-35971
    (VARS, [Z(3), F32(0), Z(1)], {}, "`max` must be rank 0 but is rank 1"),
    (VARS_GRAD, [Z((2, 2))] * 4, {}, "`min` must be rank 0 but is rank 2"),  # CVE-2022-36005
    (VARS_GRAD, [Z(6), Z((3, 2)), Z((2, 2)), F32(0)], {}, "gradient and input must be the same size"),
    (VARS_GRAD, [Z(6), Z(6), F32(0), Z(1)], {}, "`max` must be rank 0 but is rank 1"),
    (PC, [Z(4), Z((4, 0, 0)), Z(4)], {}, "`min` must be rank 1 but is rank 3"),  # CVE-2022-36019
    (PC, [Z(4), Z(4), Z((4, 1))], {}, "`max` must be rank 1 but is rank 2"),
    (PC, [Z((2, 4)), Z(3), Z((4, 1))], {}, "min has incorrect size, expected 4 was 3"),  # TF's order
    (PC, [Z((2, 4)), Z(4), Z(5)], {}, "max has incorrect size, expected 4 was 5"),
    (PC, [F32(1), Z(1), Z(1)], {}, "input must be at least rank 1 but is rank 0"),  # TF 2.21 aborts
    (PC_GRAD, [Z((1, 1))] * 4, {}, "`min` must be rank 1 but is rank 2"),  # CVE-2022-35990
    (PC_GRAD, [Z(6), Z((3, 2)), Z((2, 2)), Z((1, 1))], {}, "gradient and input must be the same size"),
    (PC_GRAD, [Z((3, 2)), Z((3, 2)), Z(3), Z(2)], {}, "min has incorrect size, expected 2 was 3"),
    (PC_GRAD, [Z((3, 2)), Z((3, 2)), Z(2), Z(1)], {}, "max has incorrect size, expected 2 was 1"),
    (PC_GRAD, [F32(1), F32(1), Z(1), Z(1)], {}, "input must be at least rank 1 but is rank 0"),  # TF aborts
]


def _invalid_id(case) -> str:
    return f"{case[0][21:] or 'Args'}-{re.sub(r'[^a-z0-9]+', '_', case[3].lower())[:40]}"


@pytest.mark.parametrize("case", INVALID, ids=_invalid_id)
def test_invalid_at_build_time(case):
    op, ins, attrs, message = case
    with pytest.raises(errors.InvalidArgumentError, match=re.escape(message)):
        run(op, *ins, **attrs)


RUN_TIME = [c for c in INVALID if c[0] not in (ARGS, ARGS_GRAD) or "same size" in c[3]]  # not attr errors


@pytest.mark.parametrize("case", RUN_TIME, ids=_invalid_id)
def test_invalid_at_run_time(case):
    op, ins, attrs, message = case
    with pytest.raises(errors.InvalidArgumentError, match=re.escape(message)) as info:
        run_fed(op, *ins, **attrs)
    assert info.value.op_type == op


def test_per_channel_sizes_unknown_depth():
    with pytest.raises(errors.InvalidArgumentError, match="min and max must have the same size, but have 3 and 2"):
        _inferred(PC, None, [3], [2])


@pytest.mark.tf
def test_scalar_per_channel_input_aborts_tf():
    """TF issue #117852: a rank-0 ``inputs`` kills TF 2.21 (CHECK failure in dim_size(-1))."""
    out = run_isolated("""
        r = tf.raw_ops.FakeQuantWithMinMaxVarsPerChannel(inputs=np.float32(1), min=np.array([-1.], np.float32),
                                                         max=np.array([1.], np.float32))
        result["value"] = r.numpy().tolist()
    """)
    # a fixed TF would raise InvalidArgument, as tfops_py does (test_invalid_at_*: "at least rank 1")
    assert "crash" in out or out.get("error") == "InvalidArgumentError", out


# -- live differential tests against TF -------------------------------------------------------------
SPECIAL_PAIRS = [(0.0, 0.0), (1.5, 1.5), (3.0, -1.0), (-10.5, 244.5), (0.0, 6.0), (-6.0, 0.0)]


@st.composite
def configs(draw) -> dict:
    op = draw(st.sampled_from(ALL_OPS))
    per_channel = op in (PC, PC_GRAD)
    rank = draw(st.integers(1 if per_channel else 0, 5))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    if per_channel and draw(st.booleans()):
        shape = shape[:-1] + (draw(st.integers(1, 4)),)
    bits = draw(st.integers(2, 16))
    narrow = draw(st.booleans())
    seed = draw(st.integers(0, 2 ** 31))
    return {"op": op, "shape": shape, "num_bits": bits, "narrow_range": narrow, "seed": seed,
            "special": draw(st.sampled_from([None, *SPECIAL_PAIRS]))}


def _differential_inputs(cfg: dict) -> tuple[dict, dict]:
    rng = np.random.default_rng(cfg["seed"])
    op, shape = cfg["op"], cfg["shape"]
    d = shape[-1] if op in (PC, PC_GRAD) else None
    lo = np.asarray(rng.uniform(-4, 1, d), F32)
    hi = np.asarray(lo + rng.uniform(-0.5, 6, d), F32)
    if cfg["special"] is not None:
        lo = np.full_like(lo, cfg["special"][0])
        hi = np.full_like(hi, cfg["special"][1])
    x = (rng.standard_normal(shape) * 4).astype(F32)
    bounds = [fq.nudge(lo, hi, cfg["num_bits"], cfg["narrow_range"])]
    on_bound = rng.random(shape) < 0.3  # put values exactly on nudged bounds and on rounding ties
    b = bounds[0]
    pick = rng.integers(0, 3, shape)
    with np.errstate(all="ignore"):
        tie = b.nudged_min + (np.floor(rng.uniform(0, 4, shape)).astype(F32) + F32(0.5)) * b.scale
        special = np.where(pick == 0, b.nudged_min + x * 0, np.where(pick == 1, b.nudged_max + x * 0, tie))
    x = np.where(on_bound & np.isfinite(special), special, x).astype(F32)
    ins = {"inputs": x}
    attrs = {"num_bits": cfg["num_bits"], "narrow_range": cfg["narrow_range"]}
    if op in (ARGS, ARGS_GRAD):
        a, c = float(np.min(lo)), float(np.max(hi))
        attrs.update(min=a, max=c if c > a else a + 1.0)
    else:
        ins.update(min=lo if d is not None else F32(lo), max=hi if d is not None else F32(hi))
    if op.endswith("Gradient"):
        ins = {"gradients": rng.standard_normal(shape).astype(F32), **ins}
    return ins, attrs


@pytest.mark.tf
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs())
def test_differential_against_tf(cfg):
    require_tf()
    ins, attrs = _differential_inputs(cfg)
    ref = raw_op(cfg["op"], **ins, **attrs)
    for backend in ("numpy", "array_api_strict"):
        got = run(cfg["op"], *ins.values(), backend=backend, **attrs)
        for j, (a, b) in enumerate(zip(got, ref)):
            assert_bits(a, np.asarray(b, F32), f"{cfg} {backend} output {j}")


@pytest.mark.tf
@pytest.mark.parametrize("op,shape", [(PC_GRAD, (44801, 2)), (PC_GRAD, (2, 30, 1000, 3)), (VARS_GRAD, (50151,)),
                                      (VARS_GRAD, (8, 9001))])
def test_large_sums_against_tf(op, shape):
    """Beyond TF's one-thread limit the shards of its reducer change the sum; ours follows."""
    require_tf()
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 2).astype(F32)
    g = (rng.standard_normal(shape) * 10 ** rng.uniform(-3, 3, shape)).astype(F32)
    d = shape[-1]
    lo, hi = (np.full(d, -1, F32), np.full(d, 0.5, F32)) if op == PC_GRAD else (F32(-1), F32(0.5))
    ref = raw_op(op, gradients=g, inputs=x, min=lo, max=hi)
    got = run(op, g, x, lo, hi)
    for a, b in zip(got, ref):
        assert_bits(a, np.asarray(b, F32), op)
