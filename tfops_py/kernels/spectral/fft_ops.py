"""FFT, IFFT, RFFT, IRFFT over the innermost 1, 2 or 3 dimensions (FFT2D, IRFFT3D, ...), through the array
API's ``fft`` extension; on NumPy through ``scipy.fft`` (the same pocketfft as ``numpy.fft``, but transforming
several rows at once with SIMD: a sixth of NumPy's CPU time for a batch of float32 frames).  TF uses ducc, the
same algorithms: results are equal within rounding.

The inverse transforms are scaled by ``1/N``.  RFFT's ``fft_length`` crops the transformed dimensions (the raw
op requires the input to be at least that long; ``tf.signal.rfft`` pads before calling it) and its last
output dimension is ``fft_length[-1] // 2 + 1`` (0 for 0).  IRFFT reads ``fft_length[i]`` entries of each
transformed dimension but ``fft_length[-1] // 2 + 1`` of the last, whose imaginary parts at frequency 0 (and
``N/2`` for even ``N``) are ignored, as a Hermitian signal's.  TF 2.21 registers no CPU kernel for FFTND,
IFFTND, RFFTND and IRFFTND (its GPU-only ops).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.fft

from tfops_py.conformance import ShapeRule, case, conformance, divergence, literal, reference, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._shape_util import host_ints, with_value
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.spectral._fft_domains import fft_length

CONFORMANCE_FAMILY = "fft"
D = DataType

_PRECISION = {D.DT_FLOAT: D.DT_COMPLEX64, D.DT_DOUBLE: D.DT_COMPLEX128}
# op -> (rank, forward, real)
_OPS = {
    "FFT": (1, True, False), "IFFT": (1, False, False), "FFT2D": (2, True, False), "IFFT2D": (2, False, False),
    "FFT3D": (3, True, False), "IFFT3D": (3, False, False),
    "RFFT": (1, True, True), "IRFFT": (1, False, True), "RFFT2D": (2, True, True), "IRFFT2D": (2, False, True),
    "RFFT3D": (3, True, True), "IRFFT3D": (3, False, True),
}


# -- shapes --------------------------------------------------------------------------------------------
def _fft_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    rank, forward, real = _OPS[ctx.op_type]
    x = ctx.with_rank_at_least(ctx.input(0), rank)
    if not real:
        return [x]
    length = ctx.with_rank(ctx.input(1), 1)
    with_value(ctx, length[0], rank)
    if x.unknown_rank():
        return [x]
    dims = list(x.as_tuple())
    value = ctx.input_tensor(1)
    lengths = host_ints(value) if value is not None else [-1] * rank
    for i, n in enumerate(lengths):
        if n < -1:
            ctx.invalid_argument(f"Dimension size must be non-negative, but got {n}")  # MakeDim's check
        # C++ division (toward zero): a length of -1 (unknown) gives RFFT's last dimension 1, as TF's shape function
        dims[len(dims) - rank + i] = int(n / 2) + 1 if forward and i == rank - 1 and n != 0 else n
    return [PartialTensorShape(dims)]


for _op in _OPS:
    register_shape(_op)(_fft_shape)


# -- kernel ----------------------------------------------------------------------------------------------
def _fft_lengths(ctx: KernelContext, x: Any, fft_length: Any, rank: int, forward: bool) -> list[int]:
    """TF's checks of ``fft_length`` against the input; the lengths."""
    value = ctx.host(fft_length)
    if value.ndim != 1 or value.shape[0] != rank:
        ctx.invalid_argument(f"fft_length must have shape [{rank}]")
    lengths = host_ints(value)
    for i, n in enumerate(lengths):
        if n < 0:
            ctx.invalid_argument(f"fft_length[{i}] must >= 0, but got: {n}")
        need = n // 2 + 1 if i == rank - 1 and not forward else n
        axis = x.ndim - rank + i
        if x.shape[axis] != 0 and x.shape[axis] < need:
            ctx.invalid_argument(f"Input dimension {axis} must have length of at least {need} but got: {x.shape[axis]}")
    return lengths


def _fft_module(ctx: KernelContext) -> Any:
    """SciPy's FFTs on NumPy, else the backend's array-API ``fft`` extension (same signatures)."""
    return scipy.fft if ctx.xp is np else ctx.xp.fft


@register_kernel(*_OPS)
def _fft(ctx: KernelContext, x: Any, fft_length: Any = None) -> Any:
    rank, forward, real = _OPS[ctx.op_type]
    if x.ndim < rank:
        ctx.invalid_argument(f"Input must have rank of at least {rank} but got: {format_shape(x.shape)}")
    xp = ctx.xp
    fft = _fft_module(ctx)
    axes = tuple(range(x.ndim - rank, x.ndim))
    out_type = ctx.dtype(ctx.output_dtypes[0])
    if not real:
        if x.size == 0:
            return x
        fn = fft.fftn if forward else fft.ifftn
        return xp.astype(fn(x, axes=axes), out_type, copy=False)
    lengths = _fft_lengths(ctx, x, fft_length, rank, forward)
    real_t, complex_t = (ctx.input_dtypes[0], ctx.output_dtypes[0]) if forward else \
        (ctx.output_dtypes[0], ctx.input_dtypes[0])
    if _PRECISION[real_t] != complex_t:
        ctx.invalid_argument(f"Wrong types for {'forward' if forward else 'backward'} real FFT: "
                             f"in={int(ctx.input_dtypes[0])} out={int(ctx.output_dtypes[0])}")
    out_shape = list(x.shape[:x.ndim - rank]) + lengths
    if forward:
        out_shape[-1] = lengths[-1] // 2 + 1 if lengths[-1] else 0
    if x.size == 0 or 0 in out_shape or 0 in lengths:  # TF leaves such an output unwritten; zeros here
        return xp.zeros(tuple(out_shape), dtype=out_type)
    if forward:
        return xp.astype(fft.rfftn(x[(...,) + tuple(slice(0, n) for n in lengths)], s=tuple(lengths), axes=axes),
                         out_type, copy=False)
    keep = lengths[:-1] + [lengths[-1] // 2 + 1]
    return xp.astype(fft.irfftn(x[(...,) + tuple(slice(0, n) for n in keep)], s=tuple(lengths), axes=axes),
                     out_type, copy=False)


# -- conformance -----------------------------------------------------------------------------------------
class TransformShapes(ShapeRule):
    """Inputs with ``rank`` transformed dimensions (and 0-2 batch dimensions), empty ones, and one of too low a
    rank; live: random sizes 1..8."""

    def __init__(self, rank: int):
        self.rank = rank

    def patterns(self) -> list[dict[str, Any]]:
        r = self.rank
        return [{"input": s} for s in [(2,) + (6,) * r, (5,) * r, (1, 2) + (4,) * r, (2,) + (0,) * r,
                                       (3, 0) + (2,) * (r - 1), (3,) * (r - 1)]]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        batch = tuple(int(v) for v in rng.integers(1, 3, int(rng.integers(0, 3))))
        return {"input": batch + tuple(int(v) for v in rng.integers(1, 9, self.rank))}


for _op, (_rank, _forward, _real) in _OPS.items():
    if not _real:
        conformance(_op, input=values(), compare="acc", live=10, shapes=TransformShapes(_rank))
        continue
    conformance(_op, input=values(), fft_length=fft_length("input", _rank, _forward), compare="acc", live=10,
                shapes=TransformShapes(_rank),
                cases=[case(input=values(), fft_length=literal(n, D.DT_INT32), shapes={"input": (2,) + (6,) * _rank},
                            id=f"{_op}/length{k}")
                       for k, n in enumerate(([11] * _rank, [-1] * _rank, [6] * (_rank + 1), [0] * _rank,
                                              [[6] * _rank], [3] * _rank))])

_REAL_OPS = tuple(op for op, (_, _, real) in _OPS.items() if real)


def _last_length_zero(inputs: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    lengths = np.asarray(inputs["fft_length"]).reshape(-1)
    return lengths.size > 0 and int(lengths[-1]) == 0 and np.size(inputs["input"]) > 0


divergence(_REAL_OPS, when="`fft_length` ending in 0 with a non-empty input",
           tf="aborts the process (DUCC: \"no zero-sized FFTs\")", ours="an empty output", applies=_last_length_zero)
divergence(_REAL_OPS,
           when="an empty input with a non-empty output (a zero-length transformed dimension, fft_length > 0)",
           tf="returns the output unwritten (uninitialised memory)", ours="zeros (the transform of zero padding)",
           applies=lambda inputs, attrs: np.size(inputs["input"]) == 0,
           reference=reference("tfops_py.kernels.spectral._fft_domains:zeros_output",
                               "TF leaves the output of an empty input unwritten: the expected value is zeros"))
