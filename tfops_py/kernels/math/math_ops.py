"""Element-wise arithmetic and comparisons, Cast, AddN, MatMul and BatchMatMulV2.

Element-wise ops are registered from tables (the ones needing more than a table entry, such as
Mod, ClipByValue or Lgamma, live in math_extra_ops.py and register through ``_register``).  The kernels of
the plain binary ops are one
``xp.<ufunc>(x, y)`` call: broadcasting is checked by the shape function at build time, and
the ufunc's own ValueError is turned into TF's "Incompatible shapes" when shapes were only
known at run time.  Half and bfloat16 transcendentals are computed in float and rounded, as
Eigen does.  Integer Div/FloorDiv/Pow check their divisors/exponents like TF's kernels.
Divergences from TF are declared at the end (``divergence``), with how each op is checked.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.conformance import (BOOL, BROADCAST, ShapeRule, conformance, divergence, family_cases, one_of,
                                  returns_inputs, small, values, via_dtype, via_op)
from tfops_py.errors import InvalidArgumentError, UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels.math import _cast
from tfops_py.kernels._common import broadcast_binary, broadcast_shapes, compute_dtype, trunc_divide, unchanged_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

Kernel = Callable[..., Any]


def _incompatible(ctx: KernelContext, x: Any, y: Any) -> InvalidArgumentError:
    return ctx.error(InvalidArgumentError, f"Incompatible shapes: {format_shape(getattr(x, 'shape', ()))} vs. "
                                           f"{format_shape(getattr(y, 'shape', ()))}")


def _check_broadcast(ctx: KernelContext, x: Any, y: Any) -> None:
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))  # host shape arithmetic only
    except ValueError:
        raise _incompatible(ctx, x, y) from None


def _register(names: tuple[str, ...], kernel: Kernel, shape: Callable = broadcast_binary) -> None:
    """Shape function and kernel of element-wise ops.  Their inf/NaN results need no per-kernel
    ``np.errstate``: a session run turns NumPy's floating-point warnings off once (TF does not warn)."""
    register_shape(*names)(shape)
    register_kernel(*names)(kernel)


# -- binary element-wise ------------------------------------------------------------------------------

def _ufunc_kernel(name: str) -> Kernel:
    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        try:
            return getattr(ctx.xp, name)(x, y)
        except ValueError:  # shapes unknown at build time and not broadcastable
            raise _incompatible(ctx, x, y) from None

    kernel.__name__ = f"_{name}"
    return kernel


for _names, _ufunc in ((("AddV2", "Add"), "add"), (("Sub",), "subtract"), (("Mul",), "multiply"),
                       (("Maximum",), "maximum"), (("Minimum",), "minimum"), (("Less",), "less"),
                       (("Greater",), "greater"), (("LogicalAnd",), "logical_and"),
                       (("LessEqual",), "less_equal"), (("GreaterEqual",), "greater_equal"),
                       (("LogicalOr",), "logical_or"), (("BitwiseAnd",), "bitwise_and"),
                       (("BitwiseOr",), "bitwise_or"), (("BitwiseXor",), "bitwise_xor"), (("Atan2",), "atan2")):
    _register(_names, _ufunc_kernel(_ufunc))


def _divides(x: Any, y: Any) -> bool:
    """Whether any element is divided: TF checks the divisors only while computing a non-empty output."""
    return 0 not in np.broadcast_shapes(tuple(x.shape), tuple(y.shape))


def _check_nonzero(ctx: KernelContext, x: Any, y: Any) -> None:
    if _divides(x, y) and ctx.xp.any(y == 0):
        ctx.invalid_argument("Integer division by zero")


def _div(ctx: KernelContext, x: Any, y: Any) -> Any:
    """Div and RealDiv: true division; integers round toward zero (TF has no integer RealDiv kernel)."""
    dt = ctx.output_dtypes[0]
    if dt.is_integer:
        _check_broadcast(ctx, x, y)
        _check_nonzero(ctx, x, y)
        return trunc_divide(ctx.xp, x, y, signed=dt.numpy_dtype.kind == "i")
    try:
        return ctx.xp.divide(x, y)
    except ValueError:
        raise _incompatible(ctx, x, y) from None


def _floor_div(ctx: KernelContext, x: Any, y: Any) -> Any:
    """Integers: floor division; floats: ``floor(x / y)`` (not NumPy's fmod-based floor_divide)."""
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    if dt.is_complex:
        ctx.unimplemented(f"FloorDiv is not defined for {dt.short_name} (TensorFlow has no such kernel)")
    if dt.is_integer:
        _check_broadcast(ctx, x, y)
        _check_nonzero(ctx, x, y)
        return xp.floor_divide(x, y)
    try:
        return xp.floor(xp.divide(x, y))
    except ValueError:
        raise _incompatible(ctx, x, y) from None


def _pow(ctx: KernelContext, x: Any, y: Any) -> Any:
    xp = ctx.xp
    if ctx.output_dtypes[0].is_integer:
        _check_broadcast(ctx, x, y)
        if _divides(x, y) and xp.any(y < 0):  # checked while computing elements: none for an empty output
            ctx.invalid_argument("Integers to negative integer powers are not allowed")
    try:
        return xp.pow(x, y)
    except ValueError:
        raise _incompatible(ctx, x, y) from None


_register(("RealDiv", "Div"), _div)
_register(("FloorDiv",), _floor_div)
_register(("Pow",), _pow)


def _equality_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """With incompatible_shape_error=False an incompatible pair gives a scalar; unknown if undecidable."""
    if ctx.attr("incompatible_shape_error"):
        return broadcast_binary(ctx)
    a, b = ctx.input(0), ctx.input(1)
    if a.unknown_rank() or b.unknown_rank():
        return [unknown_shape()]
    pairs = list(zip(reversed(a.as_tuple()), reversed(b.as_tuple())))
    if any(x != y and x >= 0 and y >= 0 and 1 not in (x, y) for x, y in pairs):  # 0 vs 2 too
        return [PartialTensorShape([])]
    if any((x == -1 and y != 1) or (y == -1 and x != 1) for x, y in pairs):
        return [unknown_shape()]
    return [broadcast_shapes(ctx, a, b)]


def _equality_kernel(name: str) -> Kernel:
    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        try:
            return getattr(ctx.xp, name)(x, y)
        except ValueError:
            if ctx.attrs["incompatible_shape_error"]:
                raise _incompatible(ctx, x, y) from None
            return ctx.asarray(name == "not_equal", DataType.DT_BOOL)

    kernel.__name__ = f"_{name}"
    return kernel


_register(("Equal",), _equality_kernel("equal"), shape=_equality_shape)
_register(("NotEqual",), _equality_kernel("not_equal"), shape=_equality_shape)


# -- unary element-wise -------------------------------------------------------------------------------

def _unary_kernel(fn: Callable[[Any, Any], Any], in_float: bool) -> Kernel:
    """``fn(xp, x)``; with ``in_float`` half/bfloat16 are computed in float and rounded once."""
    if not in_float:
        return lambda ctx, x: fn(ctx.xp, x)

    def kernel(ctx: KernelContext, x: Any) -> Any:
        dt = ctx.input_dtypes[0]
        wide = compute_dtype(dt)
        if wide == dt:
            return fn(ctx.xp, x)
        return ctx.xp.astype(fn(ctx.xp, ctx.xp.astype(x, ctx.dtype(wide))), ctx.dtype(dt))

    return kernel


def _sigmoid(ctx: KernelContext, x: Any) -> Any:
    """``1 / (1 + exp(-x))``; half and bfloat16 follow Eigen's generic ``e / (1 + e)`` in the type
    (``e = exp(x)``, 1 where e is inf), which matches TF bit for bit."""
    xp = ctx.xp
    if ctx.input_dtypes[0] not in (DataType.DT_HALF, DataType.DT_BFLOAT16):
        return 1 / (1 + xp.exp(-x))
    e = _UNARY["Exp"](ctx, x)
    return xp.where(xp.isinf(e), xp.ones_like(e), e / (1 + e))


def no_tf_kernel(ctx: KernelContext) -> None:
    """UnimplementedError for a dtype the OpDef allows but no TF kernel computes (no meaning to copy)."""
    dt = ctx.input_dtypes[0]
    ctx.unimplemented(f"{ctx.op_type} is not defined for {dt.short_name} (TensorFlow has no such kernel)")


def _round(ctx: KernelContext, x: Any) -> Any:
    """Half to even.  Integers are returned unchanged: TF's int32/int64 kernel returns zeros (a bug;
    ``tf.round`` never calls it) and TF has no int8/int16 kernel."""
    dt = ctx.input_dtypes[0]
    if dt.is_complex:
        no_tf_kernel(ctx)
    return x if dt.is_integer else ctx.xp.round(x)


def _reciprocal(ctx: KernelContext, x: Any) -> Any:
    """Reciprocal and Inv: ``1 / x``; TF has no integer kernel."""
    if ctx.input_dtypes[0].is_integer:
        no_tf_kernel(ctx)
    return 1 / x


_UNARY: dict[str, Kernel] = {
    "Neg": _unary_kernel(lambda xp, x: xp.negative(x), False),
    "Abs": _unary_kernel(lambda xp, x: xp.abs(x), False),
    "Square": _unary_kernel(lambda xp, x: xp.square(x), False),
    "Sqrt": _unary_kernel(lambda xp, x: xp.sqrt(x), True),
    "Rsqrt": _unary_kernel(lambda xp, x: 1 / xp.sqrt(x), True),
    "Exp": _unary_kernel(lambda xp, x: xp.exp(x), True),
    "Log": _unary_kernel(lambda xp, x: xp.log(x), True),
    "Tanh": _unary_kernel(lambda xp, x: xp.tanh(x), True),
    "Sigmoid": _sigmoid,
    "Sign": _unary_kernel(lambda xp, x: xp.sign(x), False),  # NaN -> NaN; complex: x / |x|, 0 at 0
    "Reciprocal": _reciprocal,
    "Inv": _reciprocal,
    "Floor": _unary_kernel(lambda xp, x: xp.floor(x), False),
    "Ceil": _unary_kernel(lambda xp, x: xp.ceil(x), False),
    "Round": _round,
    "Rint": _unary_kernel(lambda xp, x: xp.round(x), False),
    "IsNan": _unary_kernel(lambda xp, x: xp.isnan(x), False),
    "IsInf": _unary_kernel(lambda xp, x: xp.isinf(x), False),
    "IsFinite": _unary_kernel(lambda xp, x: xp.isfinite(x), False),
    "LogicalNot": _unary_kernel(lambda xp, x: xp.logical_not(x), False),
    "Invert": _unary_kernel(lambda xp, x: xp.bitwise_invert(x), False),
    "Sin": _unary_kernel(lambda xp, x: xp.sin(x), True),
    "Cos": _unary_kernel(lambda xp, x: xp.cos(x), True),
    "Tan": _unary_kernel(lambda xp, x: xp.tan(x), True),
    "Asin": _unary_kernel(lambda xp, x: xp.asin(x), True),
    "Acos": _unary_kernel(lambda xp, x: xp.acos(x), True),
    "Atan": _unary_kernel(lambda xp, x: xp.atan(x), True),
    "Sinh": _unary_kernel(lambda xp, x: xp.sinh(x), True),
    "Cosh": _unary_kernel(lambda xp, x: xp.cosh(x), True),
    "Asinh": _unary_kernel(lambda xp, x: xp.asinh(x), True),
    "Acosh": _unary_kernel(lambda xp, x: xp.acosh(x), True),
    "Atanh": _unary_kernel(lambda xp, x: xp.atanh(x), True),
}
_EXACT = frozenset({"Neg", "Abs", "Sign", "Floor", "Ceil", "Round", "Rint", "IsNan", "IsInf", "IsFinite",
                    "LogicalNot", "Invert"})  # never produce inf/NaN from finite input: no errstate needed
for _name, _kernel in _UNARY.items():
    _register((_name,), _kernel, shape=unchanged_shape)


# -- Cast -----------------------------------------------------------------------------------------------

def _cast_kernel(native: bool) -> Kernel:
    def kernel(ctx: KernelContext, x: Any) -> Any:
        convert = ctx.cache.get("convert")
        if convert is None:
            src, dst = ctx.attrs["SrcT"], ctx.attrs["DstT"]
            if src not in _cast.SUPPORTED or dst not in _cast.SUPPORTED:
                if src != dst:
                    raise ctx.error(UnimplementedError, f"Cast {src.short_name} to {dst.short_name} is not supported")
                convert = lambda v: v  # noqa: E731
            else:
                convert = _cast.make_converter(ctx.backend, src, dst, ctx.attrs["Truncate"], native)
            ctx.cache["convert"] = convert
        return convert(x)

    return kernel


register_shape("Cast")(unchanged_shape)
register_kernel("Cast")(_cast_kernel(native=False))
# NumPy: its own float -> int conversion where it already gives TF's answers (one pass instead of the
# range checks).
register_kernel("Cast", backend="numpy")(_cast_kernel(native=_cast.native_conversion_matches()))


# -- AddN --------------------------------------------------------------------------------------------------

def _add_n_mismatch(ctx: Any, first: str, i: int, other: str) -> None:
    ctx.invalid_argument(f"Inputs to operation {ctx.node_name} of type AddN must have the same size and shape.  "
                         f"Input 0: {first} != input {i}: {other}")


@register_shape("AddN")
def _add_n_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    out = ctx.input(0)
    for i in range(1, ctx.num_inputs):
        if not out.is_compatible_with(ctx.input(i)):
            _add_n_mismatch(ctx, str(ctx.input(0)), i, str(ctx.input(i)))
        out = out.merge_with(ctx.input(i))
    return [out]


@register_kernel("AddN")
def _add_n(ctx: KernelContext, inputs: list) -> Any:
    if ctx.output_dtypes[0] == DataType.DT_VARIANT:  # TensorLists: summed gradients of list ops
        from tfops_py.kernels.control_flow.list_ops import add_lists

        return add_lists(ctx, inputs)
    shape = tuple(inputs[0].shape)
    for i, v in enumerate(inputs[1:], 1):
        if tuple(v.shape) != shape:
            _add_n_mismatch(ctx, format_shape(shape), i, format_shape(v.shape))
    total = inputs[0]
    for v in inputs[1:]:
        total = ctx.xp.add(total, v)
    return total


# -- matrix products ---------------------------------------------------------------------------------

def _matmul_dims(ctx: Any, a: PartialTensorShape, b: PartialTensorShape, adj_a: bool,
                 adj_b: bool) -> tuple[int, int]:
    """(rows, cols) of the product of the last two dims; TF's message when the inner dims differ."""
    m, k1 = (a[-1], a[-2]) if adj_a else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if adj_b else (b[-2], b[-1])
    if InferenceContext.merge_dim(k1, k2) is None:
        ctx.invalid_argument(f"Matrix size-incompatible: In[0]: {a}, In[1]: {b}")
    return m, n


@register_shape("MatMul")
def _matmul_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a = ctx.with_rank(ctx.input(0), 2, "In[0]")
    b = ctx.with_rank(ctx.input(1), 2, "In[1]")
    return [PartialTensorShape(_matmul_dims(ctx, a, b, ctx.attr("transpose_a"), ctx.attr("transpose_b")))]


def _batch_matmul_dims(ctx: Any, a: PartialTensorShape, b: PartialTensorShape) -> PartialTensorShape:
    if a.dims() < 2 or b.dims() < 2:
        i, s = (0, a) if a.dims() < 2 else (1, b)
        ctx.invalid_argument(f"In[{i}] ndims must be >= 2: {s.dims()}")
    try:
        batch = broadcast_shapes(ctx, PartialTensorShape(a.as_tuple()[:-2]), PartialTensorShape(b.as_tuple()[:-2]))
    except InvalidArgumentError:
        ctx.invalid_argument(f"In[0] and In[1] must have compatible batch dimensions: {a} vs. {b}")
        raise  # unreachable
    m, n = _matmul_dims(ctx, a, b, ctx.attrs["adj_x"], ctx.attrs["adj_y"])
    return PartialTensorShape(list(batch.as_tuple()) + [m, n])


@register_shape("BatchMatMulV2")
def _batch_matmul_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a, b = ctx.input(0), ctx.input(1)
    if a.unknown_rank() or b.unknown_rank():
        return [unknown_shape()]
    return [_batch_matmul_dims(ctx, a, b)]


def _product(ctx: KernelContext, a: Any, b: Any, adj_a: bool, adj_b: bool, conj: bool) -> Any:
    xp = ctx.xp
    dt = ctx.output_dtypes[0]
    wide = compute_dtype(dt)
    if wide != dt:  # half/bfloat16: products and sums in float, rounded once
        a, b = xp.astype(a, ctx.dtype(wide)), xp.astype(b, ctx.dtype(wide))
    if adj_a:
        a = xp.matrix_transpose(xp.conj(a) if conj else a)
    if adj_b:
        b = xp.matrix_transpose(xp.conj(b) if conj else b)
    out = xp.matmul(a, b)
    return out if wide == dt else xp.astype(out, ctx.dtype(dt))


@register_kernel("MatMul")
def _matmul(ctx: KernelContext, a: Any, b: Any) -> Any:
    if a.ndim != 2 or b.ndim != 2:
        ctx.invalid_argument(f"In[0] and In[1] has different ndims: {format_shape(a.shape)} vs. "
                             f"{format_shape(b.shape)}" if a.ndim != b.ndim else
                             f"In[0] is not a matrix. Instead it has shape {format_shape(a.shape)}")
    attrs = ctx.attrs
    _matmul_dims(ctx, PartialTensorShape(a.shape), PartialTensorShape(b.shape),
                 attrs["transpose_a"], attrs["transpose_b"])
    return _product(ctx, a, b, attrs["transpose_a"], attrs["transpose_b"], conj=False)


@register_kernel("BatchMatMulV2")
def _batch_matmul(ctx: KernelContext, x: Any, y: Any) -> Any:
    _batch_matmul_dims(ctx, PartialTensorShape(x.shape), PartialTensorShape(y.shape))
    return _product(ctx, x, y, ctx.attrs["adj_x"], ctx.attrs["adj_y"],
                    conj=ctx.output_dtypes[0].is_complex)


# -- conformance (tests/conformance): how each op is checked against TF, where it departs ----------------
family_cases("tfops_py.kernels.math._math_cases:build")
_ANY = values(specials=True)
_NONE_IN_TF = ("not differentiable: TF Python's gradient is None, TF's C++ API registers none (AddSymbolicGradients "
               "raises NotFoundError, as in C++)")
_NO_GRADIENT = {"Ceil": _NONE_IN_TF, "Rint": _NONE_IN_TF, "Round": _NONE_IN_TF, "FloorDiv": _NONE_IN_TF}
for _op in ("AddV2", "Add", "Sub", "Mul", "Maximum", "Minimum", "Less", "Greater", "LessEqual", "GreaterEqual",
            "LogicalAnd", "LogicalOr", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Atan2", "RealDiv", "Div", "FloorDiv"):
    conformance(_op, x=_ANY, y=_ANY, shapes=BROADCAST, no_gradient=_NO_GRADIENT.get(_op))
conformance("Pow", x=small(), y=small(), shapes=BROADCAST)
for _op in ("Equal", "NotEqual"):
    conformance(_op, x=_ANY, y=_ANY, shapes=BROADCAST, incompatible_shape_error=BOOL)
_COMPLEX_PARTWISE = ("Sign", "Reciprocal", "Inv", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                     "Acosh", "Atanh")
for _op in _UNARY:
    conformance(_op, x=_ANY, compare="cw" if _op in _COMPLEX_PARTWISE else "ew", no_gradient=_NO_GRADIENT.get(_op))
# Every dtype pair with the values each conversion rule needs is in _math_cases; live: tests/kernels/test_math_ops.py.
conformance("Cast", generate=False)
conformance("AddN", inputs=_ANY, N=one_of(1, 2, 3, 4), live=40)


class _ProductShapes(ShapeRule):
    """Matrix products: inner dimensions that agree (as the transpose/adjoint attrs say), 0..5 each; batch
    dimensions (BatchMatMulV2) that broadcast."""

    def __init__(self, a: str, b: str, ta: str, tb: str, fixed: list[dict[str, Any]]):
        self.names, self.fixed = (a, b, ta, tb), fixed

    def patterns(self) -> list[dict[str, Any]]:
        return self.fixed

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        a, b, ta, tb = self.names
        m, k, n = (int(v) for v in rng.integers(0, 6, 3))
        t_a, t_b = (bool(v) for v in rng.integers(0, 2, 2))
        batch_a, batch_b = _broadcastable_batches(rng) if a == "x" else ((), ())
        return {a: batch_a + ((k, m) if t_a else (m, k)), b: batch_b + ((n, k) if t_b else (k, n)), ta: t_a, tb: t_b}


def _broadcastable_batches(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    base = [int(v) for v in rng.integers(1, 4, int(rng.integers(0, 4)))]
    out = []
    for _ in range(2):
        dims = [1 if rng.integers(0, 3) == 0 else d for d in base]
        out.append(tuple(dims[int(rng.integers(0, len(dims) + 1)):]))
    return out[0], out[1]


conformance("MatMul", a=small(), b=small(), compare="acc", live=30, shapes=_ProductShapes(
    "a", "b", "transpose_a", "transpose_b", [
        dict(a=(3, 4), b=(4, 5)), dict(a=(4, 3), b=(4, 5), transpose_a=True),
        dict(a=(3, 4), b=(5, 4), transpose_b=True), dict(a=(4, 3), b=(5, 4), transpose_a=True, transpose_b=True),
        dict(a=(2, 0), b=(0, 3)), dict(a=(0, 3), b=(3, 2))]))
conformance("BatchMatMulV2", x=small(), y=small(), compare="acc", live=30, shapes=_ProductShapes(
    "x", "y", "adj_x", "adj_y", [
        dict(x=(2, 1, 3, 4), y=(5, 4, 2)), dict(x=(3, 4), y=(2, 4, 5)), dict(x=(2, 4, 3), y=(2, 4, 5), adj_x=True),
        dict(x=(1, 2, 3), y=(2, 4, 3), adj_y=True), dict(x=(0, 3, 4), y=(4, 2)), dict(x=(3, 0), y=(0, 2))]))

IN_FLOAT = via_dtype(DataType.DT_FLOAT, "TF has no kernel for the dtype: the value is TF's in float, rounded back")
ROUND_INTEGERS = returns_inputs(0, note="TF's int32/int64 Round kernel returns zeros and it has no int8/int16 kernel; "
                                        "tfops_py returns the input, as tf.round")
_INTEGERS = (DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64, DataType.DT_UINT8,
             DataType.DT_UINT16, DataType.DT_UINT32, DataType.DT_UINT64)
divergence("RealDiv", when="integer inputs", tf="no kernel (NotFoundError)",
           ours="Div's result (toward zero, division-by-zero error)", dtypes=_INTEGERS,
           reference=via_op("Div", "TF has no integer RealDiv kernel; tfops_py computes Div (toward zero)"))
divergence("MatMul", when="unsigned integer inputs", tf="no kernel", ours="computed (wrapping)",
           dtypes=_INTEGERS[4:], reference=via_dtype(DataType.DT_INT64, "TF has no unsigned MatMul kernel: the value "
                                                                       "is TF's int64 product, wrapped to the type"))
divergence(("FloorDiv", "Round", "TruncateDiv"), when="complex inputs", tf="no kernel (NotFoundError)",
           ours="UnimplementedError naming the op and dtype")
divergence(("Reciprocal", "Inv"), when="signed integer inputs", tf="no kernel (NotFoundError)",
           ours="UnimplementedError naming the op and dtype")
divergence("Cast", when="out-of-range float → 8/16-bit integer, and float → uint32",
           tf="saturates in the vectorized body of a tensor but keeps the low bits in its scalar tail (the last few "
              "elements, or tensors of fewer than ~32 elements) and for complex64 sources",
           ours="the vectorized answer everywhere (the low bits for complex64 sources)")
divergence("Cast", when="double → complex64 with `Truncate=true`", tf="clears an exponent bit too (3.0 → 2.0): a bug",
           ours="truncates the real part to float precision")
divergence(("Sigmoid", "Tanh", "Exp", "Log", "Rsqrt"), when="float32", tf="Eigen's vectorized approximations",
           ours="NumPy's: within 1e-6 relative (measured ≤ 5.5e-7)")
divergence("Round", when="integer inputs",
           tf="int32/int64: returns zeros (a kernel bug; `tf.round` returns integers unchanged without calling it); "
              "int8/int16: no kernel", ours="the input", dtypes=_INTEGERS[:4], reference=ROUND_INTEGERS)
divergence("Rint", when="half / bfloat16", tf="no kernel (NotFoundError)", ours="computed in float, rounded",
           dtypes=(DataType.DT_HALF, DataType.DT_BFLOAT16), reference=IN_FLOAT)
divergence(("Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"), when="float32",
           tf="Eigen's vectorized approximations (up to ~5 ulp)",
           ours="NumPy's: within 3e-7 relative of TF, measured")
divergence(("Div", "RealDiv", "Reciprocal"), when="complex division by zero",
           tf="NaN + NaN·i in the vectorized body of a tensor, C99's ±inf parts in its scalar tail "
              "(position-dependent)",
           ours="C99's answer (NumPy's) everywhere")
divergence(("Reciprocal", "Sign"), when="complex non-finite values", tf="mixed vectorized and scalar results",
           ours="NumPy's")
