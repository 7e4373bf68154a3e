"""FusedBatchNorm / V2 / V3 and FusedBatchNormGrad / V2 / V3: shape functions, validation, kernels.

Numerics follow TF's native CPU kernels (``fused_batch_norm_op.cc``): T is computed in float32 (U),
``reserve_space_2`` is the *biased* batch variance, ``batch_variance`` carries Bessel's correction,
and the gradient uses the saved mean/variance as given.  Where TF's CPU kernel refuses a valid
configuration or leaves outputs uninitialised, these kernels give a defined answer (declared with
``divergence`` at the end, rendered into docs/ops/batch_norm.md).

The per-element work goes through an *engine*: :class:`GenericEngine` here (array API only) or
the blocked, multi-threaded NumPy engine in ``_batch_norm_impl``.  Both share every check and
every per-channel formula below.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Optional

import numpy as np

from tfops_py.conformance import (BOOL, ShapeRule, conformance, divergence, family_cases, literal, one_of, positive,
                                  reference, values)
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels.nn import _batch_norm_impl as _impl
from tfops_py.kernels.registry import KernelContext, register_kernel

Dims = Optional[tuple[int, ...]]  # None: unknown rank; -1: unknown dimension
Fail = Callable[[str], Any]

FORWARD_OPS = ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
GRAD_OPS = ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3")
_CHANNELS_LAST = ("NHWC", "NDHWC")


def channels_last(data_format: str) -> bool:
    """NHWC/NDHWC keep channels innermost; NCHW/NCDHW put them on axis 1 (TF maps 5-D formats the same way)."""
    return data_format in _CHANNELS_LAST


# -- validation shared by shape functions (partial shapes) and kernels (concrete shapes) --------------
def _fmt(d: Dims) -> str:
    return str(PartialTensorShape(d))


def _check_data_rank(fail: Fail, d: Dims) -> None:
    if d is not None and len(d) not in (4, 5):
        fail(f"input must be 4 or 5-dimensional{_fmt(d)}")


def _check_vectors(fail: Fail, named: Sequence[tuple[str, Dims]]) -> None:
    for name, d in named:
        if d is not None and len(d) != 1:
            fail(f"{name} must be 1-dimensional{_fmt(d)}")


def _channel_dim(d: Dims, last: bool) -> int:
    if d is None:
        return -1
    return d[-1] if last else d[1]


def _check_sizes(fail: Fail, c: int, named: Sequence[tuple[str, Dims]]) -> int:
    """Each vector must have C elements; returns C (learned from the vectors when x's is unknown)."""
    for name, d in named:
        k = -1 if d is None else d[0]
        if k != -1 and c != -1 and k != c:
            fail(f"{name} must have the same number of elements as the channels of x, got {k} and {c}")
        if c == -1:
            c = k
    return c


def check_forward(fail: Fail, x: Dims, scale: Dims, offset: Dims, mean: Dims, variance: Dims,
                  attrs: dict[str, Any]) -> int:
    """TF's FusedBatchNorm checks, in TF's order; returns the channel count (-1 if unknown)."""
    _check_data_rank(fail, x)
    _check_vectors(fail, (("scale", scale), ("offset", offset), ("estimated_mean", mean),
                          ("estimated_variance", variance)))
    sized = [("scale", scale), ("offset", offset)]
    is_training = attrs["is_training"]
    if not is_training or attrs["exponential_avg_factor"] != 1.0:
        prefix = "When exponential_avg_factor != 1" if is_training else "When is_training=false"
        sized += [(f"{prefix}, mean", mean), (f"{prefix}, variance", variance)]
    return _check_sizes(fail, _channel_dim(x, channels_last(attrs["data_format"])), sized)


def check_grad(fail: Fail, dy: Dims, x: Dims, scale: Dims, mean: Dims, variance: Dims,
               attrs: dict[str, Any]) -> tuple[Dims, int]:
    """TF's FusedBatchNormGrad checks, in TF's order; returns (merged x shape, channel count)."""
    _check_data_rank(fail, dy)
    _check_data_rank(fail, x)
    _check_vectors(fail, (("scale", scale), ("saved mean", mean), ("saved variance", variance)))
    if not PartialTensorShape(x).is_compatible_with(dy):
        fail(f"x and y_backprop must have same shape, but x has shape {_fmt(x)} and y_backprop has shape {_fmt(dy)}")
    merged = PartialTensorShape(x).merge_with(dy).as_list()
    merged = None if merged is None else tuple(merged)
    c = _check_sizes(fail, _channel_dim(merged, channels_last(attrs["data_format"])),
                     (("scale", scale), ("reserve_space_1", mean), ("reserve_space_2", variance)))
    return merged, c


# -- shape functions ----------------------------------------------------------------------------------
def _input_dims(ctx: InferenceContext, i: int) -> Dims:
    s = ctx.input(i)
    return None if s.unknown_rank() else s.as_tuple()


def _with_channels(d: Dims, c: int, last: bool) -> PartialTensorShape:
    if d is None:
        return PartialTensorShape()
    dims = list(d)
    dims[-1 if last else 1] = c
    return PartialTensorShape(dims)


@register_shape(*FORWARD_OPS)
def _forward_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = _input_dims(ctx, 0)
    c = check_forward(ctx.invalid_argument, x, *(_input_dims(ctx, i) for i in range(1, 5)),
                      ctx.attrs)  # pyright: ignore[reportCallIssue]  (four dims from the generator)
    vec = PartialTensorShape([c])
    shapes = [_with_channels(x, c, channels_last(ctx.attr("data_format")))] + [vec] * 4
    if ctx.op_type == "FusedBatchNormV3":
        shapes.append(PartialTensorShape([]))  # reserve_space_3: a scalar 0 (TF's native CPU value)
    return shapes


@register_shape(*GRAD_OPS)
def _grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    merged, c = check_grad(ctx.invalid_argument, *(_input_dims(ctx, i) for i in range(5)),
                           ctx.attrs)  # pyright: ignore[reportCallIssue]  (five dims from the generator)
    vec = PartialTensorShape([c])
    empty = PartialTensorShape([0])
    return [_with_channels(merged, c, channels_last(ctx.attr("data_format"))), vec, vec, empty, empty]


# -- the array-API engine -----------------------------------------------------------------------------
class GenericEngine:
    """Per-element work on any array-API namespace, on a (A, C, B) view of the data.

    Channels-last data is viewed as (rows, C, 1), channels-first as (N, C, spatial); every
    reduction is over axes (0, 2) and per-channel vectors broadcast as (1, C, 1).
    Vectors in and out are float32 of shape [C].
    """

    def __init__(self, xp: Any, shape: tuple[int, ...], last: bool):
        self.xp = xp
        self.shape = shape
        c = shape[-1] if last else shape[1]
        a = math.prod(shape[:-1]) if last else shape[0]
        b = 1 if last else math.prod(shape[2:])
        self.view = (a, c, b)
        self.count = a * b  # elements per channel

    def _f32(self, x: Any) -> Any:
        xp = self.xp
        x = xp.reshape(x, self.view)
        return x if x.dtype == xp.float32 else xp.astype(x, xp.float32)

    def _col(self, v: Any) -> Any:
        return self.xp.reshape(v, (1, self.view[1], 1))

    def _out(self, y: Any, dtype: Any) -> Any:
        xp = self.xp
        return xp.reshape(y if y.dtype == dtype else xp.astype(y, dtype), self.shape)

    def moments(self, x: Any) -> tuple[Any, Any]:
        """Batch mean and biased variance, both scaled by TF's float32 reciprocal 1/N."""
        xp = self.xp
        inv = float(np.float32(1.0) / np.float32(self.count))
        xf = self._f32(x)
        mean = xp.sum(xf, axis=(0, 2)) * inv
        xc = xf - self._col(mean)
        return mean, xp.sum(xc * xc, axis=(0, 2)) * inv

    def normalize(self, x: Any, mean: Any, k: Any, offset: Any, dtype: Any) -> Any:
        """``(x - mean) * k + offset`` in float32, cast to ``dtype``."""
        return self._out((self._f32(x) - self._col(mean)) * self._col(k) + self._col(offset), dtype)

    def grad_sums(self, dy: Any, x: Any, mean: Any) -> tuple[Any, Any]:
        """Per channel: ``sum(dy)`` and ``sum(dy * (x - mean))``."""
        xp = self.xp
        dyf = self._f32(dy)
        return xp.sum(dyf, axis=(0, 2)), xp.sum(dyf * (self._f32(x) - self._col(mean)), axis=(0, 2))

    def grad_apply(self, dy: Any, x: Any, mean: Any, a: Any, b: Any, c: Any, dtype: Any) -> Any:
        """``a * dy + b * (x - mean) + c`` per channel, cast to ``dtype``."""
        col = self._col
        xc = self._f32(x) - col(mean)
        return self._out(self._f32(dy) * col(a) + (xc * col(b) + col(c)), dtype)

    def grad_frozen(self, dy: Any, x: Any, mean: Any, a: Any, dtype: Any) -> tuple[Any, Any, Any]:
        """``(a * dy, sum(dy), sum(dy * (x - mean)))`` — the inference-mode gradient in one go."""
        sum_dy, sum_dyxc = self.grad_sums(dy, x, mean)
        return self._out(self._f32(dy) * self._col(a), dtype), sum_dy, sum_dyxc


EngineFactory = Callable[[KernelContext, tuple[int, ...], bool], Any]


def generic_engine(ctx: KernelContext, shape: tuple[int, ...], last: bool) -> GenericEngine:
    return GenericEngine(ctx.xp, shape, last)


# -- kernels ------------------------------------------------------------------------------------------
def _shape(a: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in a.shape)


def _f32(xp: Any, v: Any) -> Any:
    return v if v.dtype == xp.float32 else xp.astype(v, xp.float32)


def _rsqrt(xp: Any, v: Any, eps: float) -> Any:
    return 1.0 / xp.sqrt(v + eps)


def fused_batch_norm(ctx: KernelContext, x: Any, scale: Any, offset: Any, mean: Any, variance: Any,
                     engine: EngineFactory = generic_engine) -> tuple:
    xp, attrs = ctx.xp, ctx.attrs
    shape = _shape(x)
    c = check_forward(ctx.invalid_argument, shape, _shape(scale), _shape(offset), _shape(mean),
                      _shape(variance), attrs)
    last = channels_last(attrs["data_format"])
    eng = engine(ctx, shape, last)
    eps = attrs["epsilon"]
    t_dtype, u_dtype = ctx.dtype(ctx.output_dtypes[0]), ctx.dtype(ctx.output_dtypes[1])
    scale32, offset32 = _f32(xp, scale), _f32(xp, offset)
    if attrs["is_training"]:
        n = eng.count
        if n == 0:  # TF returns early: NaN statistics, empty y
            nan = xp.full((c,), math.nan, dtype=xp.float32)
            y = xp.zeros(shape, dtype=t_dtype)
            stats = (nan, nan, nan, nan)
        else:
            bmean, bvar = eng.moments(x)
            y = eng.normalize(x, bmean, _rsqrt(xp, bvar, eps) * scale32, offset32, t_dtype)
            adjust = np.float32(n) / np.float32(max(n - 1, 1))  # Bessel's correction, in float32 like TF
            f = np.float32(attrs["exponential_avg_factor"])
            if f == 1:
                run_mean, run_var = bmean, bvar * float(adjust)
            else:
                keep = float(np.float32(1) - f)
                run_mean = _f32(xp, mean) * keep + bmean * float(f)
                run_var = _f32(xp, variance) * keep + bvar * float(f * adjust)
            stats = (run_mean, run_var, bmean, bvar)
    else:
        mean32, var32 = _f32(xp, mean), _f32(xp, variance)
        y = eng.normalize(x, mean32, _rsqrt(xp, var32, eps) * scale32, offset32, t_dtype)
        # TF leaves reserve_space_1/2 unwritten here; they get the population statistics, which is
        # what FusedBatchNormGrad(is_training=False) expects in them.
        stats = (mean32, var32, mean32, var32)
    outs = (y,) + tuple(v if v.dtype == u_dtype else xp.astype(v, u_dtype) for v in stats)
    if ctx.op_type == "FusedBatchNormV3":
        outs += (xp.zeros((), dtype=u_dtype),)
    return outs


def fused_batch_norm_grad(ctx: KernelContext, dy: Any, x: Any, scale: Any, mean: Any, variance: Any,
                          *unused_reserve_space_3: Any, engine: EngineFactory = generic_engine) -> tuple:
    xp, attrs = ctx.xp, ctx.attrs
    shape, c = check_grad(ctx.invalid_argument, _shape(dy), _shape(x), _shape(scale), _shape(mean),
                          _shape(variance), attrs)
    assert shape is not None
    t_dtype, u_dtype = ctx.dtype(ctx.output_dtypes[0]), ctx.dtype(ctx.output_dtypes[1])
    eng = engine(ctx, shape, channels_last(attrs["data_format"]))
    n = eng.count
    empty = xp.zeros((0,), dtype=u_dtype)
    if n == 0 or c == 0:  # TF: zero scale/offset gradients, empty x_backprop
        zeros = xp.zeros((c,), dtype=u_dtype)
        return xp.zeros(shape, dtype=t_dtype), zeros, zeros, empty, empty
    scale32, mean32 = _f32(xp, scale), _f32(xp, mean)
    k = _rsqrt(xp, _f32(xp, variance), attrs["epsilon"])
    a = scale32 * k
    if attrs["is_training"]:
        sum_dy, sum_dyxc = eng.grad_sums(dy, x, mean32)
        inv = float(np.float32(1.0) / np.float32(n))
        # dx = scale*k * [(dy - mean(dy)) - (x - mean) * k^2 * mean(dy * (x - mean))]
        dx = eng.grad_apply(dy, x, mean32, a, -a * (k * k) * (sum_dyxc * inv), -a * (sum_dy * inv), t_dtype)
    else:
        # Population statistics: dx = dy * scale * k.  TF's CPU kernel refuses NCHW here; the
        # answer does not depend on the layout, so every format is computed.
        dx, sum_dy, sum_dyxc = eng.grad_frozen(dy, x, mean32, a, t_dtype)
    return (dx, xp.astype(sum_dyxc * k, u_dtype), xp.astype(sum_dy, u_dtype), empty, empty)


register_kernel(*FORWARD_OPS)(fused_batch_norm)
register_kernel(*GRAD_OPS)(fused_batch_norm_grad)


def numpy_engine(ctx: KernelContext, shape: tuple[int, ...], last: bool) -> Any:
    """The blocked multi-threaded engine for tensors large enough to pay for its Python overhead."""
    if math.prod(shape) >= max(_impl.MIN_ELEMENTS, 1):
        return _impl.NumpyEngine(shape, last)
    return GenericEngine(ctx.xp, shape, last)


@register_kernel(*FORWARD_OPS, backend="numpy")
def _fused_batch_norm_numpy(ctx: KernelContext, *inputs: Any) -> tuple:
    return fused_batch_norm(ctx, *inputs, engine=numpy_engine)


@register_kernel(*GRAD_OPS, backend="numpy")
def _fused_batch_norm_grad_numpy(ctx: KernelContext, *inputs: Any) -> tuple:
    return fused_batch_norm_grad(ctx, *inputs, engine=numpy_engine)


# -- conformance (tests/conformance): how these ops are checked against TF, where they depart ---------------
family_cases("tfops_py.kernels.nn._batch_norm_cases:build")
_EXPECTED = "tfops_py.kernels.nn._batch_norm_cases:expected"  # TF's outputs with the documented ones in place
INFERENCE_NOTE = "reserve_space_1/2 unwritten by TF in inference: population statistics"
EMPTY_TRAINING_NOTE = "empty x: reserve_space_1/2 unwritten by TF: NaN"
REFUSED_NOTE = "TF refuses NCHW inference gradient: TF's channels-last answer, transposed"
INFERENCE = reference(_EXPECTED, INFERENCE_NOTE)
_LAYOUTS = [("NHWC", (2, 3, 4, 5), 5), ("NCHW", (2, 5, 3, 4), 5), ("NHWC", (0, 2, 3, 4), 4), ("NHWC", (1, 1, 1, 3), 3)]
_LAYOUTS_5D = [("NDHWC", (2, 2, 3, 2, 4), 4), ("NCDHW", (2, 4, 2, 3, 2), 4)]


class _BatchNormShapes(ShapeRule):
    """x (and y_backprop) of rank 4 or 5 in a data format, the vectors of its channel count; live cases
    draw dims 1..5 (one of them 0 a tenth of the time) and any rank with any format."""

    def __init__(self, op: str, data: tuple[str, ...], vectors: tuple[str, ...]):
        self.data, self.vectors = data, vectors
        self.formats = ["NHWC", "NCHW"] + (["NDHWC", "NCDHW"] if op.endswith("V3") else [])
        self.layouts = _LAYOUTS + (_LAYOUTS_5D if op.endswith("V3") else [])

    def _pattern(self, fmt: str, shape: tuple[int, ...]) -> dict[str, Any]:
        c = shape[-1] if channels_last(fmt) else shape[1]
        return {**dict.fromkeys(self.data, shape), **dict.fromkeys(self.vectors, (c,)), "data_format": fmt}

    def patterns(self) -> list[dict[str, Any]]:
        return [self._pattern(fmt, shape) for fmt, shape, _ in self.layouts]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        fmt = self.formats[int(rng.integers(len(self.formats)))]
        dims = [int(d) for d in rng.integers(1, 6, int(rng.integers(4, 6)))]
        if rng.integers(0, 10) == 0:
            dims[int(rng.integers(len(dims)))] = 0
        return self._pattern(fmt, tuple(dims))


for _op in FORWARD_OPS:
    conformance(_op, x=values(), scale=positive(), offset=values(), mean=values(), variance=positive(),
                is_training=BOOL, exponential_avg_factor=one_of(1.0, 0.0, 0.25, 0.9), epsilon=one_of(1e-4, 1e-3, 0.5),
                compare="bn", static_shapes="compatible", live=14,
                shapes=_BatchNormShapes(_op, ("x",), ("scale", "offset", "mean", "variance")))
for _op in GRAD_OPS:
    conformance(_op, y_backprop=values(), x=values(), scale=positive(), reserve_space_1=values(),
                reserve_space_2=positive(), is_training=BOOL, epsilon=one_of(1e-4, 1e-3, 0.5), compare="bn",
                static_shapes="compatible", live=14,
                shapes=_BatchNormShapes(_op, ("y_backprop", "x"), ("scale", "reserve_space_1", "reserve_space_2")),
                no_gradient="second-order batch norm: TF Python only (not in TF's C++ API); not ported yet",
                **({"reserve_space_3": literal([], DataType.DT_FLOAT)} if _op.endswith("V3") else {}))


def _rank_differs_from_format(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    return np.ndim(inputs["x"]) != len(attrs.get("data_format", "NHWC"))


divergence(GRAD_OPS, when="inference gradient (`is_training=False`) in NCHW / NCDHW",
           tf="refuses it (\"The implementation of FusedBatchNormGrad with is_training=False only support NHWC "
              "tensor format for now.\")",
           ours="computes it: TF's NHWC answer on transposed inputs, transposed back (the result does not depend on "
                "the layout)",
           attrs={"is_training": False, "data_format": ("NCHW", "NCDHW")}, reference=reference(_EXPECTED, REFUSED_NOTE))
divergence(FORWARD_OPS, when="inference (`is_training=False`)",
           tf="leaves `reserve_space_1/2` unwritten (whatever memory was there)",
           ours="the population mean and variance, which an inference-mode FusedBatchNormGrad expects in them",
           attrs={"is_training": False}, reference=INFERENCE)
divergence(FORWARD_OPS, when="empty x",
           tf="returns early: NaN `batch_mean`/`batch_variance` in both modes and unwritten reserve spaces",
           ours="training gives NaN for all four statistics (a mean of nothing); inference passes the population "
                "statistics through", attrs={"is_training": True}, applies=lambda ins, attrs: np.size(ins["x"]) == 0,
           reference=reference(_EXPECTED, EMPTY_TRAINING_NOTE))
divergence(GRAD_OPS, when="empty 5-D x", tf="returns an `x_backprop` folded to 4-D (`[N, D, H*W, C]`)",
           ours="`x_backprop` has x's shape",
           applies=lambda ins, attrs: np.size(ins["x"]) == 0 and np.ndim(ins["x"]) == 5,
           reference=reference(_EXPECTED, "empty 5-D x: TF folds x_backprop to 4-D; tfops_py keeps x's shape"))
divergence("FusedBatchNormV3", when="`reserve_space_3`",
           tf="its native CPU kernel returns a scalar 0 (oneDNN: shape [0]); the graph shape function says unknown",
           ours="the scalar 0, its shape `[]` known at build time")
divergence("FusedBatchNormV3", when="U = bfloat16", tf="allowed by the op definition, no CPU kernel (NotFoundError)",
           ours="computed in float32, the statistics rounded to bfloat16")
divergence(FORWARD_OPS + GRAD_OPS, when="5-D x under `NHWC`/`NCHW`, 4-D x under `NDHWC`/`NCDHW`",
           tf="the kernel (eager) accepts them; the graph-mode shape function refuses them (\"Shape must be rank 4 "
              "but is rank 5\") and gives an x of unknown rank the format's rank",
           ours="both build and run accept them, like the kernel; an x of unknown rank keeps an unknown rank",
           applies=_rank_differs_from_format, builds=True)
divergence(FORWARD_OPS + GRAD_OPS, when="build-time errors",
           tf="the graph shape function's generic texts (\"Dimensions must be equal\")",
           ours="the kernel's messages, at build time")
divergence(FORWARD_OPS + GRAD_OPS, when="rounding",
           tf="sums in float32 in Eigen's reduction order",
           ours="the NumPy engine sums blocks in float32 and blocks together in float64, and finds the forward "
                "variance in one pass around a shift near the mean: within float32 tolerance of TF (statistics within "
                "1e-7 relative of float64 where a plain float32 sum over 100 000 rows is off by 1e-5); half and "
                "bfloat16 results may differ by one unit in the last place on a rounding boundary")
