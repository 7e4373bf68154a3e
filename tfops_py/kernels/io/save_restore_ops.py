"""Checkpoint ops of TF's V2 format: SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename, ShardedFilespec.

The file format is :mod:`tfops_py.checkpoint`; these kernels check their inputs
as TF's ``save_restore_v2_ops.cc`` does and move tensors between the session and
the files.  Everything happens on the host: tensors are read straight into NumPy
arrays (then handed to the session's backend), written from host copies.
Restored arrays are read-only and own their memory, so an ``AssignVariableOp``
takes them without another copy (each tensor is read once).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from tfops_py.checkpoint.bundle import BundleReader, BundleWriter, meta_filename, merge_bundles
from tfops_py.checkpoint.slices import parse_shape_and_slice
from tfops_py.conformance import case, conformance, family_cases, literal
from tfops_py.errors import NotFoundError, OpError
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._strings import as_text, host_strings, string_tensor
from tfops_py.kernels.registry import KernelContext, register_kernel


def _reraise(ctx: KernelContext, e: OpError) -> OpError:
    """A checkpoint-layer error re-raised naming this node."""
    return ctx.error(type(e), e.message)


def _scalar_string(ctx: KernelContext, value: Any, what: str) -> str:
    if tuple(value.shape) != ():
        ctx.invalid_argument(f"Input {what} should have a single element, got {int(np.prod(value.shape))} instead.")
    return as_text(np.asarray(value, dtype=object).reshape(-1)[0])


def _names_and_specs(ctx: KernelContext, names: Any, specs: Any, count: int) -> tuple[list[str], list[str]]:
    if len(names.shape) != 1 or len(specs.shape) != 1:
        ctx.invalid_argument(f"Input tensor_names and shape_and_slices should be an 1-D tensors, got "
                             f"{format_shape(names.shape)} and {format_shape(specs.shape)} instead.")
    n, m = names.shape[0], specs.shape[0]
    if n != m:
        ctx.invalid_argument(f"tensor_names and shape_and_slices have different number of elements: {n} vs. {m}")
    if n != count:
        ctx.invalid_argument(f"Expected {n} tensors (one per tensor name), got {count}")
    return host_strings(names), host_strings(specs)


# -- shape functions -------------------------------------------------------------------------------------
@register_shape("SaveV2", "MergeV2Checkpoints")
def _no_outputs(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


@register_shape("RestoreV2")
def _restore_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(0), 0, "prefix")
    specs = ctx.input_tensor(2)
    if specs is None or specs.ndim != 1 or specs.shape[0] != ctx.num_outputs:
        return [unknown_shape() for _ in range(ctx.num_outputs)]
    shapes = []
    for spec in host_strings(specs):
        try:
            shapes.append(PartialTensorShape(list(parse_shape_and_slice(spec)[2])) if spec else unknown_shape())
        except OpError as e:
            ctx.invalid_argument(e.message)
    return shapes


@register_shape("ShardedFilename", "ShardedFilespec")
def _scalar_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


# -- kernels ---------------------------------------------------------------------------------------------
@register_kernel("SaveV2")
def _save_v2(ctx: KernelContext, prefix: Any, tensor_names: Any, shape_and_slices: Any, tensors: list) -> tuple:
    path = _scalar_string(ctx, prefix, "prefix")
    names, specs = _names_and_specs(ctx, tensor_names, shape_and_slices, len(tensors))
    hosted = [ctx.host(t) for t in tensors]
    writer = None
    try:
        writer = BundleWriter(path)
        for name, spec, value in zip(names, specs, hosted):
            if not spec:
                writer.add(name, value)
                continue
            shape, slc, slice_shape = parse_shape_and_slice(spec)
            if tuple(value.shape) != slice_shape:
                ctx.invalid_argument(f"Slice in shape_and_slice specification does not match the shape of the "
                                     f"tensor to  save: {spec}, tensor: {format_shape(value.shape)}")
            writer.add_slice(name, shape, slc, value)
        writer.finish()
    except OpError as e:
        if writer is not None:
            writer.abort()
        if e.node_name:
            raise
        raise _reraise(ctx, e) from None
    return ()


def _open_reader(ctx: KernelContext, path: str) -> BundleReader:
    if not os.path.exists(meta_filename(path)):
        raise ctx.error(NotFoundError, f"Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                                       f"files for {path}")
    try:
        return BundleReader(path)
    except OpError as e:
        raise _reraise(ctx, e) from None


@register_kernel("RestoreV2")
def _restore_v2(ctx: KernelContext, prefix: Any, tensor_names: Any, shape_and_slices: Any) -> tuple:
    dtypes = ctx.attrs["dtypes"]
    path = _scalar_string(ctx, prefix, "prefix")
    names, specs = _names_and_specs(ctx, tensor_names, shape_and_slices, len(dtypes))
    out = []
    with _open_reader(ctx, path) as reader:
        for name, spec, want in zip(names, specs, dtypes):
            try:
                entry = reader.entry(name)
                if entry.dtype != int(want):
                    got = reader.dtype_and_shape(name)[0]
                    ctx.invalid_argument(f"tensor_name = {name}; expected dtype {want.short_name} does not equal "
                                         f"restored dtype {got.short_name}")
                if spec:
                    shape, slc, _ = parse_shape_and_slice(spec)
                    stored = tuple(d.size for d in entry.shape.dim)
                    if stored != shape:
                        ctx.invalid_argument(f"tensor_name = {name}; shape in shape_and_slice spec "
                                             f"{format_shape(shape)} does not match the shape stored in checkpoint: "
                                             f"{format_shape(stored)}")
                    value = reader.lookup_slice(name, slc, entry)
                else:
                    value = reader.lookup(name)
            except OpError as e:
                if e.node_name:
                    raise
                raise _reraise(ctx, e) from None
            if value.dtype != object and value.base is None:
                value.flags.writeable = False  # owned and immutable: a variable may adopt it as is
            out.append(ctx.backend.from_numpy(value, ctx))
    return (out,)


@register_kernel("MergeV2Checkpoints")
def _merge_v2(ctx: KernelContext, checkpoint_prefixes: Any, destination_prefix: Any) -> tuple:
    if len(checkpoint_prefixes.shape) > 1:
        ctx.invalid_argument(f"Input checkpoint_prefixes should be an 1-D tensor, got "
                             f"{format_shape(checkpoint_prefixes.shape)} instead.")
    merged = _scalar_string(ctx, destination_prefix, "destination_prefix")
    prefixes = host_strings(checkpoint_prefixes)
    try:
        merge_bundles(prefixes, merged, bool(ctx.attrs.get("allow_missing_files", False)))
    except OpError as e:
        raise _reraise(ctx, e) from None
    if ctx.attrs.get("delete_old_dirs", True):
        keep = os.path.abspath(os.path.dirname(merged))
        for p in prefixes:
            d = os.path.abspath(os.path.dirname(p))
            if d != keep:
                try:
                    os.rmdir(d)  # only an emptied directory, as TF's best-effort DeleteDir
                except OSError:
                    pass
    return ()


def _check_scalar(ctx: KernelContext, value: Any, what: str) -> int:
    if tuple(value.shape) != ():
        ctx.invalid_argument(f"{what} must be a scalar, got shape {format_shape(value.shape)}")
    return int(ctx.host(value))


@register_kernel("ShardedFilename")
def _sharded_filename(ctx: KernelContext, basename: Any, shard: Any, num_shards: Any) -> Any:
    base = _scalar_string(ctx, basename, "basename")
    s, n = _check_scalar(ctx, shard, "shard"), _check_scalar(ctx, num_shards, "num_shards")
    return string_tensor(ctx, f"{base}-{s:05d}-of-{n:05d}")


@register_kernel("ShardedFilespec")
def _sharded_filespec(ctx: KernelContext, basename: Any, num_shards: Any) -> Any:
    base = _scalar_string(ctx, basename, "basename")
    n = _check_scalar(ctx, num_shards, "num_shards")
    return string_tensor(ctx, f"{base}-?????-of-{n:05d}")


__all__: list[str] = []


# -- conformance (tests/conformance): graph cases on TF (built in _io_cases.py) -------------------------------
CONFORMANCE_FAMILY = "io"
family_cases("tfops_py.kernels.io._io_cases:build")
for _op in ("SaveV2", "RestoreV2", "MergeV2Checkpoints"):
    conformance(_op, generate=False)
conformance("ShardedFilename", generate=False, cases=[
    case(basename=literal(b"model"), shard=literal(1), num_shards=literal(3), id="ShardedFilename/1-of-3"),
    case(basename=literal(b"/tmp/x/ckpt"), shard=literal(0), num_shards=literal(1), id="ShardedFilename/only")])
conformance("ShardedFilespec", generate=False, cases=[
    case(basename=literal(b"model"), num_shards=literal(12), id="ShardedFilespec/12")])
