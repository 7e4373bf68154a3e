"""Passes that rewrite patterns into fewer, fused kernels (TF's remapper and its batch-norm folding).

``fold_batch_norms``: a per-channel ``Mul`` by a constant after Conv2D, DepthwiseConv2dNative or
MatMul (with constant weights) scales the weights instead; a per-channel constant ``Add``/``Sub``
after one becomes (or merges into) a BiasAdd; an inference FusedBatchNorm after one becomes both.
This is what Keras's batch-norm arithmetic (``x * a + b`` once the constants are folded) and TF1's
FusedBatchNorm turn into.

``fuse_epilogues``: Conv2D / DepthwiseConv2dNative / MatMul + BiasAdd [+ Add of a same-shaped
tensor, Conv2D only] [+ Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid or x*Sigmoid(x)] become one
``_FusedConv2D`` / ``_FusedDepthwiseConv2dNative`` / ``_FusedMatMul`` node whose kernel applies the
epilogue in place.  Intermediate results that anything else reads (or that are fetched) stop a fusion.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.framework.dtypes import DataType
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.client.optimizer.ir import ONode, Program, Ref, const_node

_PRODUCTS = {"Conv2D": "_FusedConv2D", "DepthwiseConv2dNative": "_FusedDepthwiseConv2dNative",
             "MatMul": "_FusedMatMul"}
_ACTIVATIONS = frozenset({"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"})
_FLOATS = frozenset({DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_HALF, DataType.DT_BFLOAT16})
_BATCH_NORMS = frozenset({"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"})


def _const(prog: Program, ref: Ref) -> np.ndarray | None:
    return ref[0].attrs["value"] if ref[0].op == "Const" and not prog.is_fed(ref) else None


def _channels_last(node: ONode) -> bool:
    return node.op == "MatMul" or node.attrs.get("data_format", "NHWC") == "NHWC"


def _product(prog: Program, ref: Ref, uses: dict[Ref, int]) -> ONode | None:
    """The Conv2D/Depthwise/MatMul producing ``ref`` when only one consumer reads it and its weights are
    a constant."""
    node = ref[0]
    if (node.op not in _PRODUCTS or ref[1] != 0 or uses.get(ref, 0) != 1 or node.control or node.external
            or node.output_types[0] not in _FLOATS or _const(prog, node.inputs[1]) is None):
        return None
    return node


def _per_channel(c: np.ndarray, channels: int, rank: int) -> np.ndarray | None:
    """``c`` as a [channels] vector when it broadcasts along the last axis only."""
    if c.ndim > rank or any(d != 1 for d in c.shape[:-1]) or (c.ndim and c.shape[-1] not in (1, channels)):
        return None
    return np.broadcast_to(c.reshape(-1), (channels,)).copy()


def _out_channels(node: ONode, w: np.ndarray) -> int:
    if node.op == "Conv2D":
        return w.shape[3]
    if node.op == "DepthwiseConv2dNative":
        return w.shape[2] * w.shape[3]
    return w.shape[0] if node.attrs.get("transpose_b") else w.shape[1]


def _scale_weights(node: ONode, w: np.ndarray, s: np.ndarray) -> np.ndarray:
    s = s.astype(w.dtype, copy=False)
    if node.op == "DepthwiseConv2dNative":
        return w * s.reshape(w.shape[2], w.shape[3])
    if node.op == "MatMul" and node.attrs.get("transpose_b"):
        return w * s[:, None]
    return w * s


def _rank(node: ONode) -> int:
    return 2 if node.op == "MatMul" else 4


def _scaled_product(prog: Program, node: ONode, s: np.ndarray) -> ONode:
    w = _const(prog, node.inputs[1])
    assert w is not None
    c = prog.insert(const_node(node, _scale_weights(node, w, s), node.input_types[1], suffix="/folded_weights"))
    return prog.insert(node.like(node.op, dict(node.attrs), [node.inputs[0], (c, 0)], suffix="/folded"))


def _bias_add(prog: Program, like: ONode, x: Ref, bias: np.ndarray, dtype: DataType) -> ONode:
    c = prog.insert(const_node(like, bias.astype(dtype.numpy_dtype), dtype, suffix="/folded_bias"))
    fmt = "NHWC"
    bias_add = like.like("BiasAdd", {"T": dtype, "data_format": fmt}, [x, (c, 0)], output_types=[dtype],
                         output_shapes=[x[0].output_shapes[x[1]]])
    return prog.insert(bias_add)


def fold_batch_norms(prog: Program) -> None:
    uses = prog.use_counts()

    def adopt(old: Ref, new: ONode) -> None:
        prog.replace(old, (new, 0))
        uses[(new, 0)] = uses.get(old, 0)

    for node in prog.walk():
        if node.control or node.output_types[:1] and node.output_types[0] not in _FLOATS:
            continue
        if node.op == "Mul":
            for k in (0, 1):
                c = _const(prog, node.inputs[k])
                if c is not None and _fold_channel_op(prog, node, node.inputs[1 - k], c, uses, adopt, True):
                    break
        elif node.op in ("Add", "AddV2", "Sub"):
            for k in ((0, 1) if node.op != "Sub" else (1,)):
                c = _const(prog, node.inputs[k])
                if c is not None and _fold_channel_op(prog, node, node.inputs[1 - k], -c if node.op == "Sub" else c,
                                                      uses, adopt, False):
                    break
        elif node.op in _BATCH_NORMS:
            _fold_batch_norm(prog, node, uses, adopt)


def _bias_of(prog: Program, ref: Ref, uses: dict[Ref, int]) -> tuple[ONode, ONode, np.ndarray] | None:
    """(BiasAdd, product, bias) when ``ref`` is a channels-last BiasAdd of a foldable product."""
    node = ref[0]
    if node.op != "BiasAdd" or uses.get(ref, 0) != 1 or node.control or node.attrs.get("data_format") == "NCHW":
        return None
    bias = _const(prog, node.inputs[1])
    product = _product(prog, node.inputs[0], uses)
    if bias is None or product is None or not _channels_last(product):
        return None
    return node, product, bias


def _fold_channel_op(prog: Program, node: ONode, x: Ref, c: np.ndarray, uses: dict, adopt: Any,
                     multiply: bool) -> bool:
    """``x * c`` (``multiply``) or ``x + c`` for a per-channel constant ``c`` after a product or a
    BiasAdd of one: scaled weights (and bias), or a (merged) bias."""
    dtype = node.output_types[0]
    product, found = _product(prog, x, uses), None
    if product is not None and _channels_last(product):
        channels = _out_channels(product, _const(prog, product.inputs[1]))  # type: ignore[arg-type]
    else:
        found = _bias_of(prog, x, uses)
        if found is None:
            return False
        bias_add, product, bias = found
        channels = bias.shape[0]
    v = _per_channel(c, channels, _rank(product))
    if v is None:
        return False
    if found is None:
        new = _scaled_product(prog, product, v) if multiply else _bias_add(prog, node, x, v, dtype)
    elif multiply:
        scaled = _scaled_product(prog, product, v)
        uses[(scaled, 0)] = 1
        new = _bias_add(prog, bias_add, (scaled, 0), bias * v, dtype)
    else:
        new = _bias_add(prog, bias_add, bias_add.inputs[0], bias + v, dtype)
    adopt((node, 0), new)
    return True


def _fold_batch_norm(prog: Program, node: ONode, uses: dict, adopt: Any) -> None:
    attrs = node.attrs
    if attrs.get("is_training", True) or attrs.get("data_format", "NHWC") != "NHWC":
        return
    if any(uses.get((node, k), 0) for k in range(1, node.num_outputs())):
        return
    product = _product(prog, node.inputs[0], uses)
    params = [_const(prog, r) for r in node.inputs[1:5]]
    if product is None or not _channels_last(product) or any(p is None for p in params):
        return
    scale, offset, mean, var = (p.astype(np.float32) for p in params)  # type: ignore[union-attr]
    s = scale / np.sqrt(var + np.float32(attrs.get("epsilon", 1e-4)))
    if s.shape != (_out_channels(product, _const(prog, product.inputs[1])),):  # type: ignore[arg-type]
        return
    scaled = _scaled_product(prog, product, s)
    uses[(scaled, 0)] = 1
    adopt((node, 0), _bias_add(prog, node, (scaled, 0), offset - mean * s, node.output_types[0]))


def fold_pads(prog: Program) -> None:
    """A zero Pad of rows and columns only, read only by a VALID Conv2D or DepthwiseConv2dNative (NHWC),
    becomes that convolution's EXPLICIT padding (no padded copy of the input)."""
    uses = prog.use_counts()
    for node in prog.walk():
        if node.op not in ("Conv2D", "DepthwiseConv2dNative") or node.attrs.get("padding") != "VALID" \
                or node.attrs.get("data_format", "NHWC") != "NHWC" or node.control:
            continue
        pad = node.inputs[0][0]
        paddings = _const(prog, pad.inputs[1]) if pad.op == "Pad" and len(pad.inputs) == 2 else None
        if (paddings is None or pad.control or uses.get(node.inputs[0], 0) != 1 or paddings.shape != (4, 2)
                or (paddings < 0).any() or paddings[0].any() or paddings[3].any()
                or pad.requested_device != node.requested_device):
            continue
        node.inputs = [pad.inputs[0]] + list(node.inputs[1:])
        node.attrs = dict(node.attrs, padding="EXPLICIT", explicit_paddings=[int(v) for v in paddings.reshape(-1)])
        node.dirty = True


# -- fusion ------------------------------------------------------------------------------------------------

def _new_fused(prog: Program, product: ONode, bias: Ref, bias_add: ONode) -> ONode:
    t = product.output_types[0]
    attrs = dict(product.attrs, fused_ops=["BiasAdd"], num_args=1, epsilon=1e-4, leakyrelu_alpha=0.2)
    if product.op == "Conv2D":
        attrs.update(TArgs=[t], num_host_args=0, filter_format="HWIO")
    fused = product.like(_PRODUCTS[product.op], attrs, list(product.inputs[:2]) + [bias])
    fused.name = bias_add.name  # as TF's remapper: the fused node takes the name of the last node it replaces
    return prog.insert(fused)


def fuse_epilogues(prog: Program) -> None:
    uses = prog.use_counts()
    fused: dict[int, ONode] = {}

    def open_fusion(ref: Ref) -> ONode | None:
        """The fused node producing ``ref`` when nothing else reads it and it has no activation yet."""
        node = fused.get(id(ref[0]))
        if node is None or uses.get(ref, 0) != 1 or any(a in node.attrs["fused_ops"] for a in
                                                       _ACTIVATIONS | {"_MklSwish"}):
            return None
        return node

    def extend(node: ONode, target: ONode, step: str, **attrs: Any) -> None:
        target.attrs = dict(target.attrs, fused_ops=list(target.attrs["fused_ops"]) + [step], **attrs)
        target.name = node.name
        prog.replace((node, 0), (target, 0))
        uses[(target, 0)] = uses.get((node, 0), 0)

    for node in prog.walk():
        if node.control:
            continue
        op = node.op
        if op == "BiasAdd":
            product = node.inputs[0][0]
            if (product.op in _PRODUCTS and node.inputs[0][1] == 0 and uses.get(node.inputs[0], 0) == 1
                    and not product.control and not product.external and product.output_types[0] in _FLOATS
                    and product.requested_device == node.requested_device
                    and (node.attrs.get("data_format", "NHWC") == "NCHW") == (not _channels_last(product))):
                f = _new_fused(prog, product, node.inputs[1], node)
                fused[id(f)] = f
                prog.replace((node, 0), (f, 0))
                uses[(f, 0)] = uses.get((node, 0), 0)
        elif op in _ACTIVATIONS:
            f = open_fusion(node.inputs[0])
            if f is not None:
                extend(node, f, op, **({"leakyrelu_alpha": node.attrs.get("alpha", 0.2)} if op == "LeakyRelu" else {}))
        elif op in ("Add", "AddV2"):
            for k in (0, 1):
                f = open_fusion(node.inputs[k])
                other = node.inputs[1 - k]
                if (f is not None and f.op == "_FusedConv2D" and f.attrs["fused_ops"] == ["BiasAdd"]
                        and other[0].output_types[other[1]] == f.output_types[0]
                        and other[0].output_shapes[other[1]].as_tuple() == f.output_shapes[0].as_tuple()
                        and not f.output_shapes[0].unknown_rank()):
                    f.inputs = list(f.inputs) + [other]
                    f.input_types = list(f.input_types) + [f.output_types[0]]
                    f.attrs["num_args"] = 2
                    f.attrs["TArgs"] = [f.output_types[0]] * 2
                    prog.move_here(f)
                    extend(node, f, "Add")
                    break
        elif op == "Mul":
            for k in (0, 1):
                x, s = node.inputs[k], node.inputs[1 - k]
                f = fused.get(id(x[0]))
                if (f is not None and x[1] == 0 and s[0].op == "Sigmoid" and s[0].inputs[0] == x
                        and uses.get(x, 0) == 2 and uses.get(s, 0) == 1 and not s[0].control
                        and not any(a in f.attrs["fused_ops"] for a in _ACTIVATIONS | {"_MklSwish"})):
                    extend(node, f, "_MklSwish")
                    break


_AFFINE_ACTIVATIONS = {"Relu": "Relu", "Relu6": "Relu6", "Elu": "Elu"}


def fuse_affine_activations(prog: Program) -> None:
    """``x * a + b`` with per-channel constants on a 4-D NHWC float32 ``x`` that no product absorbed
    (DenseNet's pre-activation batch norm after a concatenation), with an optional following Relu,
    Relu6 or Elu, becomes one ``_FusedBatchNormEx`` (scale a, offset b, mean 0, variance 1, epsilon
    0: the same arithmetic, one pass instead of three)."""
    uses = prog.use_counts()
    for node in prog.walk():
        if node.op not in ("Add", "AddV2") or node.control or node.output_types[0] != DataType.DT_FLOAT:
            continue
        for k in (0, 1):
            mul, b = node.inputs[1 - k], _const(prog, node.inputs[k])
            if b is None or mul[0].op != "Mul" or uses.get(mul, 0) != 1 or mul[0].control:
                continue
            found = _affine_operands(prog, mul[0], b)
            if found is not None:
                _replace_affine(prog, node, uses, *found)
                break


def _affine_operands(prog: Program, mul: ONode, b: np.ndarray) -> tuple[Ref, np.ndarray, np.ndarray] | None:
    for j in (0, 1):
        a, x = _const(prog, mul.inputs[j]), mul.inputs[1 - j]
        shape = x[0].output_shapes[x[1]]
        if a is None or shape.unknown_rank() or shape.dims() != 4 or shape[3] < 0:
            continue
        scale, offset = _per_channel(a, shape[3], 4), _per_channel(b, shape[3], 4)
        if scale is not None and offset is not None and x[0].output_types[x[1]] == DataType.DT_FLOAT:
            return x, scale.astype(np.float32), offset.astype(np.float32)
    return None


def _replace_affine(prog: Program, add: ONode, uses: dict, x: Ref, scale: np.ndarray, offset: np.ndarray) -> None:
    c = scale.shape[0]
    params = [prog.insert(const_node(add, v, DataType.DT_FLOAT, suffix=f"/{name}"))
              for name, v in (("scale", scale), ("offset", offset), ("mean", np.zeros(c, np.float32)),
                              ("variance", np.ones(c, np.float32)))]
    shape = x[0].output_shapes[x[1]]
    vec = PartialTensorShape([c])
    bn = add.like("_FusedBatchNormEx", {"T": DataType.DT_FLOAT, "U": DataType.DT_FLOAT, "epsilon": 0.0,
                                        "exponential_avg_factor": 1.0, "num_side_inputs": 0,
                                        "activation_mode": "Identity", "data_format": "NHWC",
                                        "is_training": False},
                  [x] + [(p, 0) for p in params], output_types=[DataType.DT_FLOAT] * 6,
                  output_shapes=[shape, vec, vec, vec, vec, PartialTensorShape([])])
    prog.insert(bn)
    prog.replace((add, 0), (bn, 0))
    uses[(bn, 0)] = uses.get((add, 0), 0)


def fuse_batch_norm_activations(prog: Program) -> None:
    """A Relu, Relu6 or Elu that alone reads a ``_FusedBatchNormEx`` without activation joins it."""
    uses = prog.use_counts()
    for node in prog.walk():
        if node.op not in _AFFINE_ACTIVATIONS or node.control:
            continue
        src = node.inputs[0]
        bn = src[0]
        if (bn.op == "_FusedBatchNormEx" and src[1] == 0 and uses.get(src, 0) == 1 and bn.orig is None
                and bn.attrs.get("activation_mode") == "Identity"):
            bn.attrs = dict(bn.attrs, activation_mode=_AFFINE_ACTIVATIONS[node.op])
            bn.name = node.name
            prog.replace((node, 0), (bn, 0))
