"""Gradients of the FFTs (TF's Python ``fft_ops.py``: FFT/IFFT 1-3D, RFFT/IRFFT 1-2D; TF registers none for
RFFT3D/IRFFT3D) and of ComplexAbs (``math_grad.py``), built from the same ops.

An FFT's gradient is the inverse transform scaled by the transform size; RFFT's adds back the terms its
Hermitian symmetry drops (as TF: it assumes the input was not cropped); IRFFT's doubles the de-duplicated bins.
"""
from __future__ import annotations

import numpy as np

from tfops_py import ops
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import NoGradient, Operation, Output, as_output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.matrix_grad import _dim
from tfops_py.gradients.linalg_grad import _tensor, concat, stack
from tfops_py.gradients.registry import register_gradient

_REAL = {DataType.DT_COMPLEX64: DataType.DT_FLOAT, DataType.DT_COMPLEX128: DataType.DT_DOUBLE}
# Where these gradients differ from TF's C++ API (listed in docs/gradients.md by tools/gen_gradient_table.py).
BEYOND_TF_CC = {op: "registered (TF: Python only)" for op in (
    "FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D", "RFFT", "IRFFT", "RFFT2D", "IRFFT2D", "ComplexAbs")}
CHANGED_FROM_TF_CC: dict[str, str] = {}
_COMPLEX = {v: k for k, v in _REAL.items()}


def raw_op(scope: Scope, op_type: str, *inputs: object, **attrs: object) -> Output:
    """The first output of a node of ``op_type`` (the spectral ops have no class in TF's C++ API)."""
    node = add_node(scope, get_op_def(op_type), [as_output(_tensor(scope, x)) for x in inputs], dict(attrs))
    scope.status().raise_if_error()
    return Output(node, 0)


def _size(scope: Scope, x: Output, rank: int) -> Output:
    """The number of elements of ``x``'s innermost ``rank`` dimensions (int32)."""
    shape = ops.Shape(scope, x).output
    inner = ops.StridedSlice(scope, shape, np.asarray([-rank], np.int32), np.asarray([0], np.int32),
                             np.asarray([1], np.int32), end_mask=1).output
    return ops.Prod(scope, inner, np.int32(0)).output


def _complex_fft_grad(rank: int, forward: bool):
    def grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
        g = grad_inputs[0]
        size = _size(scope, g, rank)
        suffix = "" if rank == 1 else f"{rank}D"
        if forward:  # FFT: N ifft(g)
            return [ops.Mul(scope, raw_op(scope, f"IFFT{suffix}", g), ops.Cast(scope, size, g.type()).y).z]
        real = _REAL[g.type()]
        rsize = ops.Cast(scope, ops.RealDiv(scope, ops.Cast(scope, np.float64(1.0), real).y,
                                           ops.Cast(scope, size, real).y).z, g.type()).y
        return [ops.Mul(scope, raw_op(scope, f"FFT{suffix}", g), rsize).z]

    return grad


for _rank in (1, 2, 3):
    suffix = "" if _rank == 1 else f"{_rank}D"
    register_gradient(f"FFT{suffix}")(_complex_fft_grad(_rank, True))
    register_gradient(f"IFFT{suffix}")(_complex_fft_grad(_rank, False))


def _ymask(scope: Scope, length: Output, dtype: DataType) -> Output:
    """``[1, -1, 1, -1, ...]`` of ``length`` in ``dtype``."""
    n = ops.Range(scope, np.int32(0), length, np.int32(1)).output
    return ops.Cast(scope, ops.Sub(scope, np.int32(1), ops.Mul(scope, np.int32(2),
                                                                 ops.FloorMod(scope, n, np.int32(2)).z).z).z, dtype).y


def _mask_matrix(scope: Scope, length: Output, dtype: DataType) -> Output:
    """``exp(-2 pi i a b / length)`` for ``a, b`` in ``range(length)``."""
    n = ops.ExpandDims(scope, ops.Range(scope, np.int32(0), length, np.int32(1)).output, 0).output
    a = ops.Tile(scope, n, stack(scope, [length, np.int32(1)])).output
    b = ops.Transpose(scope, a, np.asarray([1, 0], np.int32)).y
    angle = ops.RealDiv(scope, ops.Cast(scope, ops.Mul(scope, a, b).z, dtype).y, ops.Cast(scope, length, dtype).y).z
    return ops.Exp(scope, ops.Mul(scope, ops.Cast(scope, np.complex128(-2j * np.pi), dtype).y, angle).z).y


def _rfft_grad(rank: int):
    inverse = {1: "IRFFT", 2: "IRFFT2D"}[rank]

    def grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
        g = grad_inputs[0]
        fft_length = op.input(1)
        cdt, rdt = g.type(), _REAL[g.type()]
        input_shape = ops.Shape(scope, op.input(0)).output
        last_length = _dim(scope, fft_length, -1)
        is_even = ops.Cast(scope, ops.Sub(scope, np.int32(1), ops.FloorMod(scope, last_length, np.int32(2)).z).z,
                           cdt).y
        y0 = _last_slice(scope, g, 0, 1)
        ym = _last_slice(scope, g, -1, None)
        if rank == 1:
            extra = ops.AddV2(scope, y0, ops.Mul(scope, ops.Mul(scope, is_even, ym).z,
                                                 _ymask(scope, _dim(scope, input_shape, -1), cdt)).z).z
        else:
            mask = _mask_matrix(scope, _dim(scope, input_shape, -2), cdt)
            y0_term = ops.BatchMatMulV2(scope, mask, ops.Conj(scope, y0).output).output
            ym_term = ops.BatchMatMulV2(scope, mask, ops.Conj(scope, ym).output).output
            inner = _dim(scope, input_shape, -1)
            ones = ops.Fill(scope, ops.Reshape(scope, ops.Sub(scope, ops.Rank(scope, g).output, 1).z,
                                              np.asarray([1], np.int32)).output, np.int32(1)).output
            multiples = concat(scope, [ones, ops.Reshape(scope, inner, np.asarray([1], np.int32)).output], 0)
            ym_term = ops.Mul(scope, ops.Tile(scope, ym_term, multiples).output, _ymask(scope, inner, cdt)).z
            extra = ops.AddV2(scope, y0_term, ops.Mul(scope, is_even, ym_term).z).z
        size = ops.Cast(scope, _size(scope, op.input(0), rank), rdt).y
        scaled = ops.Mul(scope, raw_op(scope, inverse, g, fft_length, Treal=rdt), size).z
        total = ops.AddV2(scope, scaled, ops.Real(scope, extra, Tout=rdt).output).z
        return [ops.Mul(scope, ops.Cast(scope, np.float64(0.5), rdt).y, total).z, NoGradient()]

    return grad


def _last_slice(scope: Scope, x: Output, start: int, stop: int | None) -> Output:
    """``x[..., start:stop]``."""
    return ops.StridedSlice(scope, x, np.asarray([0, start], np.int32), np.asarray([0, stop or 0], np.int32),
                            np.asarray([1, 1], np.int32), ellipsis_mask=0b01,
                            end_mask=0b10 if stop is None else 0).output


def _irfft_grad(rank: int):
    forward = {1: "RFFT", 2: "RFFT2D"}[rank]

    def grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
        """``rfft(g) / N`` with the bins a Hermitian signal counts twice doubled: ``[1, 2, ..., 2, (1)]``."""
        g = grad_inputs[0]
        fft_length = op.input(1)
        rdt = g.type()
        cdt = _COMPLEX[rdt]
        is_odd = ops.FloorMod(scope, _dim(scope, fft_length, -1), np.int32(2)).z
        last = _dim(scope, ops.Shape(scope, op.input(0)).output, -1)
        twos = ops.Fill(scope, ops.Reshape(scope, ops.AddV2(scope, ops.Sub(scope, last, np.int32(2)).z, is_odd).z,
                                           np.asarray([1], np.int32)).output, ops.Cast(scope, np.float64(2.0), rdt).y)
        ones = ops.Fill(scope, ops.Reshape(scope, ops.Sub(scope, np.int32(1), is_odd).z,
                                           np.asarray([1], np.int32)).output, ops.Cast(scope, np.float64(1.0), rdt).y)
        mask = concat(scope, [ops.Cast(scope, np.asarray([1.0]), rdt).y, twos.output, ones.output], 0)
        rsize = ops.Reciprocal(scope, ops.Cast(scope, _size(scope, g, rank), rdt).y).y
        the_rfft = raw_op(scope, forward, g, fft_length, Tcomplex=cdt)
        return [ops.Mul(scope, the_rfft, ops.Cast(scope, ops.Mul(scope, rsize, mask).z, cdt).y).z, NoGradient()]

    return grad


register_gradient("RFFT")(_rfft_grad(1))
register_gradient("RFFT2D")(_rfft_grad(2))
register_gradient("IRFFT")(_irfft_grad(1))
register_gradient("IRFFT2D")(_irfft_grad(2))


@register_gradient("ComplexAbs")
def _complex_abs_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """``complex(g, 0) x / complex(|x|, 0)`` (0 where |x| is 0)."""
    g, x, y = grad_inputs[0], op.input(0), op.output(0)
    cdt = x.type()
    g_c = ops.Complex(scope, g, ops.ZerosLike(scope, g).y, Tout=cdt).out
    y_c = ops.Complex(scope, y, ops.ZerosLike(scope, y).y, Tout=cdt).out
    return [ops.DivNoNan(scope, ops.Mul(scope, g_c, x).z, y_c).z]

