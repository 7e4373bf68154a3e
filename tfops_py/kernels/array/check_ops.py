"""Run-time checks that pass their input through or stop the step: CheckNumerics(V2), EnsureShape, Assert.

A failed check raises InvalidArgumentError with TF's message; Assert's message shows each data tensor as
``Tensor::SummarizeValue`` does (``kernels/_summarize.py``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, float_specials, graph_case, literal, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels._shape_util import merge_shapes
from tfops_py.kernels._summarize import summarize_value
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"

register_shape("CheckNumerics", "CheckNumericsV2")(unchanged_shape)


def _non_finite(ctx: KernelContext, tensor: Any) -> tuple[bool, bool, bool]:
    """(has -inf, has +inf, has NaN), reduced on the backend: three booleans come to the host."""
    xp = ctx.xp
    if tensor.size == 0:
        return False, False, False
    inf = xp.isinf(tensor)
    negative = bool(xp.any(inf & (tensor < 0)))
    positive = bool(xp.any(inf & (tensor > 0)))
    return negative, positive, bool(xp.any(xp.isnan(tensor)))


@register_kernel("CheckNumerics")
def _check_numerics(ctx: KernelContext, tensor: Any) -> Any:
    negative, positive, nan = _non_finite(ctx, tensor)
    found = " and ".join(w for w, hit in (("Inf", negative or positive), ("NaN", nan)) if hit)
    if found:
        ctx.invalid_argument(f"{ctx.attrs['message']} : Tensor had {found} values")
    return tensor


@register_kernel("CheckNumericsV2")
def _check_numerics_v2(ctx: KernelContext, tensor: Any) -> Any:
    """Like CheckNumerics, telling -Inf from +Inf ("-Inf, +Inf, and NaN")."""
    hits = [w for w, hit in zip(("-Inf", "+Inf", "NaN"), _non_finite(ctx, tensor)) if hit]
    if hits:
        found = hits[0] if len(hits) == 1 else " and ".join(hits) if len(hits) == 2 else "-Inf, +Inf, and NaN"
        ctx.invalid_argument(f"{ctx.attrs['message']} : Tensor had {found} values")
    return tensor


# -- EnsureShape ---------------------------------------------------------------------------------------------
@register_shape("EnsureShape")
def _ensure_shape_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    desired: PartialTensorShape = ctx.attr("shape")
    src = ctx.input(0)
    rank = -1 if desired.unknown_rank() else desired.dims()
    if not src.unknown_rank() and src.dims() != rank:
        ctx.invalid_argument(f"Shape must be rank {rank} but is rank {src.dims()}")  # TF's WithRank, even for -1
    return [merge_shapes(ctx, desired, src)]


@register_kernel("EnsureShape")
def _ensure_shape(ctx: KernelContext, input: Any) -> Any:  # noqa: A002 - TF's argument name
    expected: PartialTensorShape = ctx.attrs["shape"]
    actual = tuple(input.shape)
    if not expected.is_compatible_with(PartialTensorShape(list(actual))):
        name = ctx.input_nodes[0] if ctx.input_nodes else "input"
        ctx.invalid_argument(f"Shape of tensor {name} {format_shape(actual)} is not compatible with expected shape "
                             f"{expected}.")
    return input


# -- Assert --------------------------------------------------------------------------------------------------
@register_shape("Assert")
def _assert_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


def assert_message(data: list[np.ndarray], dtypes: list[DataType], summarize: int) -> str:
    """TF's "assertion failed: [..] [..] " (each tensor summarized, each followed by a space)."""
    return "assertion failed: " + "".join(f"[{summarize_value(d, summarize, dt)}] " for d, dt in zip(data, dtypes))


@register_kernel("Assert")
def _assert(ctx: KernelContext, condition: Any, data: list[Any]) -> tuple[()]:
    cond = ctx.host(condition)
    if cond.ndim != 0:
        ctx.invalid_argument(f"In[0] should be a scalar: {format_shape(cond.shape)}")
    if not bool(cond):
        ctx.invalid_argument(assert_message([ctx.host(d) for d in data], list(ctx.input_dtypes[1:]),
                                            ctx.attrs["summarize"]))
    return ()


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_F32, _F64, _I32 = DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32
_NAN, _INF = float("nan"), float("inf")

for _op in ("CheckNumerics", "CheckNumericsV2"):
    conformance(_op, tensor=values(), message="bad values", compare="exact", cases=[
        case(id=f"{_op}/specials", tensor=float_specials()),
        case(id=f"{_op}/nan", tensor=literal([1.0, _NAN])),
        case(id=f"{_op}/plus_inf", tensor=literal([_INF, 2.0])),
        case(id=f"{_op}/minus_inf", tensor=literal([[-_INF], [0.0]])),
        case(id=f"{_op}/both_infs", tensor=literal([_INF, -_INF])),
        case(id=f"{_op}/minus_inf_nan", tensor=literal([-_INF, _NAN])),
        case(id=f"{_op}/all", T=_F32, tensor=literal([_NAN, -_INF, _INF])),
        case(id=f"{_op}/empty", T=_F64, shapes={"tensor": (0, 3)}),
    ])

conformance("EnsureShape", input=values(), shape=PartialTensorShape([2, -1]), compare="exact",
            shapes=[{"input": (2, 3)}, {"input": (2, 0)}], cases=[
                case(id="EnsureShape/scalar", T=_I32, shape=PartialTensorShape([]), shapes={"input": ()}),
                case(id="EnsureShape/wrong_dim", T=_F32, shape=PartialTensorShape([2, 4]), shapes={"input": (2, 3)}),
                case(id="EnsureShape/wrong_rank", T=_F32, shape=PartialTensorShape([2]), shapes={"input": (2, 3)}),
            ])


def _assert_case(case_id: str, cond: bool, summarize: int, **data: Any) -> Any:
    names = list(data)

    def ours(scope: Any, *xs: Any) -> tuple[list, list]:
        from tfops_py import ops

        check = ops.Assert(scope, ops.Const(scope, cond), list(xs), summarize=summarize)
        return [ops.Identity(scope.WithControlDependencies([check.operation]), xs[0]).output], []

    def theirs(tf: Any, *xs: Any) -> tuple[list, list]:
        check = tf.raw_ops.Assert(condition=tf.constant(cond), data=list(xs), summarize=summarize)
        with tf.control_dependencies([check]):
            return [tf.identity(xs[0])], []

    return graph_case(case_id, ours, theirs, compare="exact", **{n: data[n] for n in names})


_ASSERT_CASES = [
    _assert_case("Assert/passes", True, 3, a=literal([1.0, 2.0], _F32)),
    _assert_case("Assert/vector", False, 3, a=literal(list(range(5)), _I32)),
    _assert_case("Assert/summarize_all", False, -1, a=literal([0.1, 1 / 3, 1e300, _NAN, -_INF], _F64)),
    _assert_case("Assert/summarize_none", False, 0, a=literal([1, 2], DataType.DT_INT64)),
    _assert_case("Assert/nested", False, 5, a=literal(np.arange(24).reshape(2, 3, 4), _I32)),
    _assert_case("Assert/nested_cut", False, 13, a=literal(np.arange(24).reshape(2, 3, 4), _I32)),
    _assert_case("Assert/mixed", False, 3, a=literal([[True, False], [False, True]]),
                 b=literal([b"a\nb", b"q\"t", b"x"]), c=literal(np.zeros((0, 3)), _F32),
                 d=literal(7, DataType.DT_INT8), e=literal([1.5, 2.25], DataType.DT_HALF),
                 f=literal([0.1, 1e20, 1e-7], _F32), g=literal([1 + 2j], DataType.DT_COMPLEX64)),
    _assert_case("Assert/bfloat16_uint", False, 2, a=literal([1.5, -2.0, 3.0], DataType.DT_BFLOAT16),
                 b=literal([250], DataType.DT_UINT8), c=literal([2**63], DataType.DT_UINT64)),
]
conformance("Assert", generate=False, graph_cases=_ASSERT_CASES, T=[_F32], summarize=3, compare="exact")
