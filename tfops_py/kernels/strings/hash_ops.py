"""StringToHashBucketFast, StringToHashBucketStrong, StringToHashBucket and Fingerprint, bit-exact with TF.

* ``StringToHashBucketFast`` and ``Fingerprint("farmhash64")``: FarmHash ``Fingerprint64`` (the ``pyfarmhash``
  package, C++), bucket ``= fingerprint mod num_buckets`` in uint64 as TF computes it.
* ``StringToHashBucketStrong``: SipHash-2-4 keyed with ``key[0]``, ``key[1]`` as two little-endian uint64
  (the ``siphash24`` package).
* ``StringToHashBucket`` (deprecated): TF's own 64-bit MurmurHash variant (``tsl::Hash64``, seed
  ``0xDECAFCAFFE``), vectorised here over all strings at once, one step per 8-byte block.

Fingerprint of a string tensor of rank > 1 fingerprints each row's buffer of per-string fingerprints, as TF.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from tfops_py.conformance import choice, conformance, divergence, one_of, reference, text, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.strings._text import flat_strings

CONFORMANCE_FAMILY = "strings"

try:
    import farmhash
except ImportError:  # pragma: no cover - the strings extra is not installed
    farmhash = None
try:
    import siphash24
except ImportError:  # pragma: no cover
    siphash24 = None

_FINGERPRINT_SIZE = 8
_M = np.uint64(0xC6A4A7935BD1E995)
_R = np.uint64(47)
_HASH64_SEED = 0xDECAFCAFFE


def _need(ctx: KernelContext, module: Any, package: str) -> None:
    if module is None:
        ctx.unimplemented(f"{ctx.op_type} needs the {package} package: pip install 'tfops_py[strings]'")


def fingerprint64(items: list[bytes]) -> np.ndarray:
    """FarmHash Fingerprint64 of each string, as uint64."""
    return np.fromiter(map(farmhash.fingerprint64, items), dtype=np.uint64, count=len(items))


def hash64(items: list[bytes], seed: int = _HASH64_SEED) -> np.ndarray:
    """TF's ``Hash64`` of each string (MurmurHash64A over little-endian 8-byte blocks), vectorised."""
    n = len(items)
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=n)
    data = np.frombuffer(b"".join(items) + bytes(8), dtype=np.uint8)
    starts = np.cumsum(lengths) - lengths
    with np.errstate(over="ignore"):
        h = np.uint64(seed) ^ (lengths.astype(np.uint64) * _M)
        blocks = lengths // 8
        for j in range(int(blocks.max()) if n else 0):
            live = np.nonzero(blocks > j)[0]
            k = data[(starts[live] + 8 * j)[:, None] + np.arange(8)].copy().view("<u8")[:, 0]
            k *= _M
            k ^= k >> _R
            k *= _M
            h[live] = (h[live] ^ k) * _M
        tails = lengths % 8
        tail_at = starts + 8 * blocks
        for b in range(7):  # tail bytes, XORed in at bit 8 * b
            live = np.nonzero(tails > b)[0]
            h[live] ^= data[tail_at[live] + b].astype(np.uint64) << np.uint64(8 * b)
        live = tails > 0
        h[live] *= _M
        h ^= h >> _R
        h *= _M
        h ^= h >> _R
    return h


def _buckets(ctx: KernelContext, hashes: np.ndarray, shape: tuple[int, ...]) -> Any:
    buckets = (hashes % np.uint64(ctx.attrs["num_buckets"])).astype(np.int64)
    return ctx.asarray(buckets.reshape(shape), DataType.DT_INT64)


register_shape("StringToHashBucketFast", "StringToHashBucketStrong", "StringToHashBucket")(unchanged_shape)


@register_kernel("StringToHashBucketFast", host=True)
def _string_to_hash_bucket_fast(ctx: KernelContext, input: Any) -> Any:
    _need(ctx, farmhash, "pyfarmhash")
    return _buckets(ctx, fingerprint64(flat_strings(input)), np.shape(input))


@register_kernel("StringToHashBucket", host=True)
def _string_to_hash_bucket(ctx: KernelContext, string_tensor: Any) -> Any:
    return _buckets(ctx, hash64(flat_strings(string_tensor)), np.shape(string_tensor))


@register_kernel("StringToHashBucketStrong", host=True)
def _string_to_hash_bucket_strong(ctx: KernelContext, input: Any) -> Any:
    _need(ctx, siphash24, "siphash24")
    key = list(ctx.attrs["key"])
    if len(key) != 2:
        ctx.invalid_argument("Key must have 2 elements")
    packed = struct.pack("<QQ", *(k % 2**64 for k in key))
    items = flat_strings(input)
    hashes = np.fromiter((siphash24.siphash24(s, key=packed).intdigest() for s in items), dtype=np.int64,
                         count=len(items)).view(np.uint64)  # intdigest is the signed reading of the 64 bits
    return _buckets(ctx, hashes, np.shape(input))


# -- Fingerprint ---------------------------------------------------------------------------------------------
@register_shape("Fingerprint")
def _fingerprint_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    data = ctx.with_rank_at_least(ctx.input(0), 1)
    ctx.with_rank(ctx.input(1), 0)
    method = ctx.input_tensor(1)
    name: bytes | None = None if method is None else np.asarray(method).item()
    if name is not None and name != b"farmhash64":
        ctx.invalid_argument(f"Unsupported method: {name.decode('utf-8', 'backslashreplace')}")
    return [PartialTensorShape([-1 if data.unknown_rank() else data.as_tuple()[0], _FINGERPRINT_SIZE])]


def _le_bytes(hashes: np.ndarray) -> np.ndarray:
    return hashes.astype("<u8").view(np.uint8).reshape(-1, _FINGERPRINT_SIZE)


@register_kernel("Fingerprint", host=True)
def _fingerprint(ctx: KernelContext, data: Any, method: Any) -> Any:
    _need(ctx, farmhash, "pyfarmhash")
    if np.ndim(method) != 0:
        ctx.invalid_argument(f"`method` should be a scalar string: {format_shape(np.shape(method))}")
    name: bytes = np.asarray(method).item()
    if name != b"farmhash64":
        ctx.invalid_argument(f"Unsupported fingerprint method: {name.decode('utf-8', 'backslashreplace')}")
    if np.ndim(data) == 0:
        ctx.invalid_argument("`data` should have at least one dimension: []")
    rows = np.shape(data)[0]
    if ctx.input_dtypes[0] == DataType.DT_STRING:
        items = flat_strings(data)
        if rows and len(items) == rows:  # one string per row: its own fingerprint
            return ctx.asarray(_le_bytes(fingerprint64(items)), DataType.DT_UINT8)
        per_string = _le_bytes(fingerprint64(items)).reshape(rows, -1) if rows else np.empty((0, 0), np.uint8)
    else:
        per_string = np.ascontiguousarray(ctx.host(data)).reshape(rows, -1).view(np.uint8) if rows else \
            np.empty((0, 0), np.uint8)
    row_bytes = [bytes(r) for r in per_string] if per_string.shape[1] else [b""] * rows
    return ctx.asarray(_le_bytes(fingerprint64(row_bytes)), DataType.DT_UINT8)


_SHAPES = [{"input": ()}, {"input": (5,)}, {"input": (2, 0)}, {"input": (2, 3)}]
conformance("StringToHashBucketFast", input=text(invalid=True), num_buckets=one_of(1, 7, 2**31 - 1, 2**62),
            shapes=_SHAPES)
conformance("StringToHashBucket", string_tensor=text(invalid=True, max_words=8), num_buckets=one_of(1, 7, 2**62),
            shapes=[{"string_tensor": s["input"]} for s in _SHAPES])
conformance("StringToHashBucketStrong", input=text(invalid=True), num_buckets=one_of(1, 1000, 2**62),
            key=one_of([1, 2], [0, 0], [2**63 - 1, -1]), shapes=_SHAPES)
_D = DataType
# Every type whose TensorProto TF can build (TF cannot make Consts of the float8 *fnuz types).
_FINGERPRINT_TYPES = (_D.DT_BOOL, _D.DT_INT8, _D.DT_UINT8, _D.DT_INT16, _D.DT_UINT16, _D.DT_INT32, _D.DT_UINT32,
                      _D.DT_INT64, _D.DT_UINT64, _D.DT_HALF, _D.DT_BFLOAT16, _D.DT_FLOAT, _D.DT_DOUBLE,
                      _D.DT_COMPLEX64, _D.DT_COMPLEX128, _D.DT_STRING, _D.DT_FLOAT8_E4M3FN, _D.DT_FLOAT8_E5M2)
conformance("Fingerprint", data=values(), method=choice(b"farmhash64"), T=one_of(*_FINGERPRINT_TYPES),
            shapes=[{"data": s} for s in ((1,), (4,), (3, 2), (2, 3, 2), (0,), (0, 3))])
divergence("Fingerprint", when="string data with rows of no elements (shape [n, 0, ...], n > 0)",
           tf="leaves the output uninitialised (garbage bytes)",
           ours="the fingerprint of an empty buffer for each row, as for numeric data",
           applies=lambda inputs, attrs: inputs["data"].dtype == object and np.ndim(inputs["data"]) > 1
           and np.shape(inputs["data"])[0] > 0 and np.size(inputs["data"]) == 0,
           reference=reference("tfops_py.kernels.strings._string_cases:empty_rows_fingerprint",
                               "Fingerprint of b'' per row"))
