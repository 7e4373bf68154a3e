"""The fused ops' golden cases (TF's ``_Fused*`` ops have no Python wrapper: the oracle imports their
NodeDef).  What TF 2.21's native CPU kernels compute: convolution and MatMul with BiasAdd (or
FusedBatchNorm for convolution) and an activation, and their errors (a bias of the wrong length is a
divergence: TF does not check it).  _FusedDepthwiseConv2dNative and _FusedBatchNormEx have no native CPU
kernel: their values are TF's unfused ops in turn.  The epilogues TF refuses on CPU are checked against
the unfused ops in tests/kernels/test_fused_ops.py.  Imported only when cases are made.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.conformance import CaseList, reference

CONV = dict(strides=[1, 2, 2, 1], padding="SAME")
ACTIVATIONS = (None, "Relu", "Relu6", "Elu", "LeakyRelu")  # what TF's CPU kernels fuse after BiasAdd
EPILOGUE = dict(epsilon=1e-3, leakyrelu_alpha=0.3)


def _normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _steps(first: list[str], act: str | None) -> list[str]:
    return first + ([act] if act else [])


def unfused_depthwise(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's DepthwiseConv2dNative, BiasAdd and activation, each on the previous one's output."""
    x, w, (bias,) = inputs
    base = {k: v for k, v in attrs.items() if k in ("strides", "padding", "explicit_paddings", "data_format",
                                                    "dilations")}
    (y,) = run_tf("DepthwiseConv2dNative", [x, w], base)
    (y,) = run_tf("BiasAdd", [y, bias], {"data_format": attrs.get("data_format", "NHWC")})
    act = attrs["fused_ops"][1:]
    if act:
        (y,) = run_tf(act[0], [y], {"alpha": attrs["leakyrelu_alpha"]} if act[0] == "LeakyRelu" else {})
    return [y]


def unfused_batch_norm(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's FusedBatchNormV3 (the reserve spaces it leaves unwritten as the batch norm family documents), then
    AddV2 of the side input and Relu."""
    from tfops_py.kernels.nn._batch_norm_cases import expected

    *operands, sides = inputs
    outs = expected(run_tf, "FusedBatchNormV3", operands, {k: v for k, v in attrs.items()
                                                            if k in ("epsilon", "is_training", "data_format",
                                                                     "exponential_avg_factor")})
    if sides:
        (outs[0],) = run_tf("AddV2", [outs[0], sides[0]], {})
    if attrs.get("activation_mode", "Identity") == "Relu":
        (outs[0],) = run_tf("Relu", [outs[0]], {})
    return outs


UNFUSED_BATCH_NORM = reference(unfused_batch_norm, "no native CPU kernel in TF: its FusedBatchNormV3, AddV2 of the "
                                                   "side input and Relu in turn")
UNFUSED_DEPTHWISE = reference(unfused_depthwise, "no native CPU kernel in TF: its DepthwiseConv2dNative, "
                                                 "BiasAdd and activation in turn")


def build(out: CaseList) -> None:
    rng = out.rng()
    x, f = _normal(rng, (2, 9, 8, 4)), _normal(rng, (3, 3, 4, 6))
    bias, bn = _normal(rng, (6,)), [_normal(rng, (6,)) for _ in range(3)] + [rng.random(6).astype(np.float32) + 0.5]
    for act in ACTIVATIONS:
        steps = _steps(["BiasAdd"], act)
        out.add("_FusedConv2D", [x, f, [bias], []], dict(CONV, fused_ops=steps, num_args=1, **EPILOGUE),
                id=f"_FusedConv2D/{'+'.join(steps)}", compare="acc")
    for act in (None, "Relu", "Relu6"):
        steps = _steps(["FusedBatchNorm"], act)
        out.add("_FusedConv2D", [x, f, bn, []], dict(CONV, fused_ops=steps, num_args=4, **EPILOGUE),
                id=f"_FusedConv2D/{'+'.join(steps)}", compare="acc")
    out.add("_FusedConv2D", [x, f, [bias], []], dict(strides=[1, 1, 1, 1], padding="VALID", dilations=[1, 2, 1, 1],
                                                     fused_ops=["BiasAdd", "Relu"], num_args=1, **EPILOGUE),
            id="_FusedConv2D/valid-dilated", compare="acc")
    out.add("_FusedConv2D", [x.astype(np.float64), f.astype(np.float64), [bias.astype(np.float64)], []],
            dict(CONV, fused_ops=["BiasAdd", "Relu"], num_args=1, **EPILOGUE), id="_FusedConv2D/double", compare="acc")
    out.add("_FusedConv2D", [x, f, [bias], []], dict(CONV, fused_ops=["Relu"], num_args=1, **EPILOGUE),
            id="_FusedConv2D/activation-alone")
    out.add("_FusedConv2D", [x, f, [bias], []], dict(CONV, fused_ops=["FusedBatchNorm"], num_args=1, **EPILOGUE),
            id="_FusedConv2D/batch-norm-one-arg")

    a, b = _normal(rng, (6, 7)), _normal(rng, (7, 6))
    for act in ACTIVATIONS + ("Tanh", "Sigmoid"):
        steps = _steps(["BiasAdd"], act)
        out.add("_FusedMatMul", [a, b, [bias]], dict(fused_ops=steps, num_args=1, **EPILOGUE),
                id=f"_FusedMatMul/{'+'.join(steps)}", compare="acc")
    out.add("_FusedMatMul", [a.T.copy(), b, [bias]], dict(transpose_a=True, fused_ops=["BiasAdd", "Relu"], num_args=1,
                                                          **EPILOGUE), id="_FusedMatMul/transpose_a", compare="acc")
    for dt in (np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)):
        out.add("_FusedMatMul", [a.astype(dt), b.astype(dt), [bias.astype(dt)]],
                dict(fused_ops=["BiasAdd", "Relu"], num_args=1, **EPILOGUE), id=f"_FusedMatMul/{dt.name}",
                compare="acc")
    out.add("_FusedMatMul", [a, b, [bias, bias]], dict(fused_ops=["BiasAdd"], num_args=2, **EPILOGUE),
            id="_FusedMatMul/two-args")
    out.add("_FusedMatMul", [a, b, bn], dict(fused_ops=["FusedBatchNorm"], num_args=4, **EPILOGUE),
            id="_FusedMatMul/batch-norm")

    xd, w = _normal(rng, (2, 7, 6, 4)), _normal(rng, (3, 3, 4, 2))
    bias8 = _normal(rng, (8,))
    for act in ACTIVATIONS:
        steps = _steps(["BiasAdd"], act)
        out.add("_FusedDepthwiseConv2dNative", [xd, w, [bias8]], dict(CONV, fused_ops=steps, num_args=1, **EPILOGUE),
                id=f"_FusedDepthwiseConv2dNative/{'+'.join(steps)}", reference=UNFUSED_DEPTHWISE,
                compare="acc")

    xb, side = _normal(rng, (2, 4, 5, 8)), _normal(rng, (2, 4, 5, 8))
    bn8 = [_normal(rng, (8,)) for _ in range(3)] + [rng.random(8).astype(np.float32) + 0.5]
    for training in (False, True):
        for mode, sides in (("Identity", []), ("Relu", []), ("Relu", [side]), ("Identity", [side])):
            out.add("_FusedBatchNormEx", [xb] + bn8 + [sides],
                    dict(epsilon=1e-3, is_training=training, activation_mode=mode, num_side_inputs=len(sides)),
                    id=f"_FusedBatchNormEx/{'training' if training else 'inference'}-{mode}-{len(sides)}-side",
                    compare="acc", reference=UNFUSED_BATCH_NORM)
