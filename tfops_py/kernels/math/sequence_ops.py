"""LinSpace and SobolSample: sequences made from scalars.

LinSpace is TF's ``start + i * ((stop - start) / (num - 1))`` in the output type, the last value ``stop``
exactly.  SobolSample is the unscrambled Sobol sequence with Joe and Kuo's direction numbers at 30 bits
(SciPy's ``scipy.stats.qmc.Sobol`` gives the same points as TF bit for bit), the all-zero first point
skipped as TF does; it is generated on the host and moved to the backend (a host-natured op).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, divergence, literal, one_of, uniform
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._shape_util import check_scalar_inputs
from tfops_py.kernels.math._sizes import sized
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "math_ops"
SOBOL_MAX_DIM = 21200
SOBOL_BITS = 30


def _scalar_value(ctx: InferenceContext, i: int) -> int | None:
    value = ctx.input_tensor(i)
    return None if value is None else int(value)


# -- LinSpace ---------------------------------------------------------------------------------------------
@register_shape("LinSpace")
def _lin_space_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    check_scalar_inputs(ctx, ("start", "stop", "num"))
    num = _scalar_value(ctx, 2)
    if num is not None and num <= 0:
        ctx.invalid_argument(f"Requires num > 0: {num}")
    return [PartialTensorShape([-1 if num is None else num])]


@register_kernel("LinSpace")
def _lin_space(ctx: KernelContext, start: Any, stop: Any, num: Any) -> Any:
    for name, value in (("start", start), ("stop", stop), ("num", num)):
        if value.ndim != 0:
            ctx.invalid_argument(f"{name} must be a scalar, not shape {format_shape(value.shape)}")
    n = int(ctx.host(num))
    if n <= 0:
        ctx.invalid_argument(f"Requires num > 0: {n}")
    sized(ctx, [n])
    xp = ctx.xp
    if n == 1:
        return xp.reshape(start, (1,))
    step = (stop - start) / (n - 1)  # in the output type, as TF
    out = start + step * xp.astype(xp.arange(n - 1), start.dtype)
    return xp.concat([out, xp.reshape(stop, (1,))])


# -- SobolSample ------------------------------------------------------------------------------------------
@register_shape("SobolSample")
def _sobol_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    for i in range(3):
        ctx.with_rank(ctx.input(i), 0)
    dim, num = _scalar_value(ctx, 0), _scalar_value(ctx, 1)
    return [PartialTensorShape([-1 if num is None else num, -1 if dim is None else dim])]


def sobol_points(dim: int, num_results: int, skip: int) -> np.ndarray:
    """Points ``skip + 1 .. skip + num_results`` of the ``dim``-dimensional Sobol sequence, float64, host."""
    from scipy.stats import qmc  # imported on first use: scipy.stats is slow to import

    engine = qmc.Sobol(dim, scramble=False, bits=SOBOL_BITS)
    engine.fast_forward(skip + 1)
    return engine.random(num_results)


@register_kernel("SobolSample")
def _sobol_sample(ctx: KernelContext, dim: Any, num_results: Any, skip: Any) -> Any:
    values = {}
    for name, value in (("dim", dim), ("num_results", num_results), ("skip", skip)):
        v = ctx.host(value)
        if v.ndim != 0:
            ctx.invalid_argument(f"{name} must be a scalar, got shape {format_shape(v.shape)}")
        values[name] = int(v)
    d, n, s = values["dim"], values["num_results"], values["skip"]
    if d < 1:
        ctx.invalid_argument("dim must be at least one")
    if d > SOBOL_MAX_DIM:
        ctx.invalid_argument(f"dim must be at most {SOBOL_MAX_DIM}")
    if n < 1:
        ctx.invalid_argument("num_results must be at least one")
    if s < 0:
        ctx.invalid_argument("skip must be non-negative")
    if s + n >= 2 ** SOBOL_BITS:
        ctx.invalid_argument(f"skip + num_results must be below 2**{SOBOL_BITS} (the sequence's length at "
                             f"{SOBOL_BITS} bits), got {s} + {n}")
    dt = ctx.output_dtypes[0]
    sized(ctx, [n, d])
    return ctx.backend.from_numpy(sobol_points(d, n, s).astype(dt.numpy_dtype), ctx)


# -- conformance (tests/conformance) -------------------------------------------------------------------------
_I32, _I64 = DataType.DT_INT32, DataType.DT_INT64
conformance("LinSpace", start=uniform(-10, 10), stop=uniform(-10, 10), num=literal(7, _I32), compare="ew", live=20,
            shapes=[dict(start=(), stop=())],
            cases=[case(start=literal(a), stop=literal(b), num=literal(n, t))
                   for a, b, n, t in ((0.0, 1.0, 5, _I32), (3.0, 1.0, 1, _I64), (0.1, 0.7, 4, _I64),
                                      (0.0, 1.0, 0, _I32),
                                      (0.0, 1.0, -2, _I64), (1e30, -1e30, 3, _I32), (2.5, 2.5, 4, _I32))]
            + [case(start=literal([0.0]), stop=literal(1.0), num=literal(3, _I32)),
               case(start=literal(0.0), stop=literal(1.0), num=literal([3], _I32))])
conformance("SobolSample", generate=False, dtype=one_of(DataType.DT_FLOAT, DataType.DT_DOUBLE), compare="exact",
            cases=[case(dim=literal(d, _I32), num_results=literal(n, _I32), skip=literal(s, _I32), dtype=dt)
                   for d, n, s in ((3, 4, 0), (2, 3, 5), (50, 64, 7), (1, 1, 0), (0, 3, 5), (21201, 1, 0), (2, 0, 0),
                                   (2, 3, -1), (2, 3, 1000))
                   for dt in (DataType.DT_FLOAT, DataType.DT_DOUBLE)])

divergence("SobolSample", when="skip + num_results ≥ 2³⁰",
           tf="returns garbage past the sequence's end (negative coordinates)", ours="InvalidArgumentError")
