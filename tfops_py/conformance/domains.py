"""Input domains: how the conformance harness draws one input of an op.

A domain is declared next to a kernel (``x=values(specials=True)``, ``axis=axis_of("x")``) and drawn
only when cases are generated, from a seeded ``numpy.random.Generator``.  Domains that relate an
input to another (``axis_of``, ``index_into``, ``shape_of``) name it and are drawn after it.

:func:`draw_values` is the value generator every golden file since the first math family was made
with; changing it changes stored cases, so it is frozen (new behaviour goes into new domains).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.framework.dtypes import DataType

Shape = tuple[int, ...]
KINDS = ("any", "small", "positive", "nonzero")


class Draw:
    """What a domain may look at while drawing: the generator, its dtype and pattern shape, earlier inputs."""

    __slots__ = ("rng", "dtype", "shape", "inputs", "attrs")

    def __init__(self, rng: np.random.Generator, dtype: DataType, shape: Shape | None,
                 inputs: Mapping[str, Any], attrs: Mapping[str, Any]):
        self.rng = rng
        self.dtype = dtype
        self.shape = shape
        self.inputs = inputs
        self.attrs = attrs

    def rank_of(self, name: str) -> int:
        return int(np.ndim(self.inputs[name]))


class Domain:
    """Base class: a domain draws an array of ``d.dtype``; by default of the case's pattern shape."""

    #: inputs this domain reads (drawn first)
    depends: tuple[str, ...] = ()
    #: whether the input takes its shape from the case's shape pattern
    patterned: bool = True

    def accepts(self, dtype: DataType) -> bool:
        """Whether values of ``dtype`` can be drawn (cases with other dtypes are not generated)."""
        return True

    def fixed_dtype(self) -> DataType | None:
        """The dtype this domain always produces (pins the input's type attr), or None."""
        return None

    def draw(self, d: Draw) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


# -- plain values -------------------------------------------------------------------------------------
def draw_values(rng: np.random.Generator, dtype: Any, shape: Sequence[int], kind: str = "any",
                specials: bool = False) -> np.ndarray:
    """Random test values of a NumPy dtype.

    ``kind``: ``any`` (integers over the type's whole range, floats ~ N(0, 3)), ``small`` (integers
    within +-8), ``positive`` or ``nonzero``.  ``specials`` puts NaN, +-inf and +-0 at about a sixth of
    the positions of a real floating array (complex arrays never get them).
    """
    dt = np.dtype(dtype)
    shape = tuple(shape)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = (max(info.min, -8), min(info.max, 8)) if kind == "small" else (info.min, info.max)
        if kind == "positive":
            lo = 1
        v = rng.integers(lo, hi, shape, endpoint=True, dtype=np.int64 if dt != np.uint64 else np.uint64)
        if kind == "nonzero":
            v = np.where(v == 0, 1, v)
        return v.astype(dt)
    if dt.kind == "c":
        return (draw_values(rng, np.float64, shape, kind) + 1j * draw_values(rng, np.float64, shape, kind)).astype(dt)
    v = rng.standard_normal(shape) * 3
    if kind == "positive":
        v = np.abs(v) + 0.1
    elif kind == "nonzero":
        v = np.where(np.abs(v) < 0.1, 0.5, v)
    if specials and v.size:
        flat = v.reshape(-1)
        picks = rng.choice(flat.size, size=min(flat.size, max(1, flat.size // 6)), replace=False)
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=picks.size)
    return v.astype(dt)


def draw_strings(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """Short random byte strings (0-3 bytes of a small alphabet), as a NumPy object array."""
    n = math.prod(shape)
    alphabet = np.frombuffer(b"abcxyz", np.uint8)
    lengths = rng.integers(0, 4, n)
    items = [alphabet[rng.integers(0, alphabet.size, k)].tobytes() for k in lengths]
    return np.array(items + [b""], dtype=object)[:n].reshape(tuple(shape))


_LOW_BIT = frozenset({DataType.DT_INT4, DataType.DT_UINT4, DataType.DT_INT2, DataType.DT_UINT2})


def draw_any(rng: np.random.Generator, dtype: DataType, shape: Sequence[int], kind: str = "any",
             specials: bool = False) -> np.ndarray:
    """:func:`draw_values` for every DataType with a NumPy form: strings, float8 and 4-bit integers too."""
    if dtype == DataType.DT_STRING:
        return draw_strings(rng, shape)
    if dtype in _LOW_BIT:
        info = ml_dtypes.iinfo(dtype.numpy_dtype)
        return rng.integers(max(int(info.min), -8) if kind != "positive" else 1, int(info.max), tuple(shape),
                            endpoint=True).astype(dtype.numpy_dtype)
    return draw_values(rng, dtype.numpy_dtype, shape, kind, specials)


class Values(Domain):
    """Random values of the input's dtype (see :func:`draw_values`); ``only`` restricts the dtypes."""

    def __init__(self, kind: str = "any", specials: bool = False, only: str | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        self.kind, self.specials, self.only = kind, specials, only

    def accepts(self, dtype: DataType) -> bool:
        if self.only == "floating":
            return dtype.is_floating
        if self.only == "integer":
            return dtype.is_integer
        return _has_numpy(dtype)

    def draw(self, d: Draw) -> np.ndarray:
        return draw_any(d.rng, d.dtype, d.shape or (), self.kind, self.specials)


def _has_numpy(dtype: DataType) -> bool:
    try:
        _ = dtype.numpy_dtype
    except KeyError:
        return False
    return True


def values(kind: str = "any", specials: bool = False) -> Values:
    """Random values of the input's dtype: ``kind`` any, small (ints within +-8), positive or nonzero;
    ``specials`` adds NaN, +-inf and +-0 to real floating inputs."""
    return Values(kind, specials)


def floats(kind: str = "any", specials: bool = False) -> Values:
    """:func:`values` restricted to real floating dtypes (half, bfloat16, float, double)."""
    return Values(kind, specials, only="floating")


def positive() -> Values:
    return Values("positive")


def nonzero() -> Values:
    return Values("nonzero")


def small() -> Values:
    return Values("small")


class Uniform(Domain):
    """Values uniform in [lo, hi] (integers: whole numbers within it; complex: both parts)."""

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, hi

    def accepts(self, dtype: DataType) -> bool:
        return _has_numpy(dtype) and dtype not in (DataType.DT_STRING, DataType.DT_BOOL)

    def draw(self, d: Draw) -> np.ndarray:
        shape = d.shape or ()
        dt = d.dtype.numpy_dtype
        if d.dtype.is_integer:
            info = np.iinfo(dt)
            lo, hi = max(int(np.ceil(self.lo)), int(info.min)), min(int(np.floor(self.hi)), int(info.max))
            return d.rng.integers(lo, hi, shape, endpoint=True).astype(dt)
        v = d.rng.uniform(self.lo, self.hi, shape)
        if d.dtype.is_complex:
            v = v + 1j * d.rng.uniform(self.lo, self.hi, shape)
        return v.astype(dt)


def uniform(lo: float = -1.0, hi: float = 1.0) -> Uniform:
    """Values uniform in [lo, hi]: bounded magnitudes (products that must not overflow half)."""
    return Uniform(lo, hi)


# -- explicit values ----------------------------------------------------------------------------------
class Literal(Domain):
    """Explicit values (Python scalars or nested lists), converted to the input's dtype."""

    patterned = False

    def __init__(self, value: Any, dtype: DataType | None = None):
        self.value, self.dtype = value, dtype

    def fixed_dtype(self) -> DataType | None:
        return self.dtype

    def accepts(self, dtype: DataType) -> bool:
        """Whether every value survives conversion to ``dtype`` (so a hand case expands over those dtypes)."""
        if self.dtype is not None:
            return dtype == self.dtype
        if not _has_numpy(dtype) or dtype == DataType.DT_STRING:
            return _is_bytes(self.value) and dtype == DataType.DT_STRING
        if _is_bytes(self.value):
            return False
        flat = np.asarray(self.value, dtype=object).reshape(-1)
        kinds = {_kind(v) for v in flat}
        if dtype == DataType.DT_BOOL:
            return kinds <= {"bool"}
        if "bool" in kinds:
            return False
        if dtype.is_complex:
            return True
        if "complex" in kinds:
            return False
        if dtype.is_floating:
            return True
        if "float" in kinds or not dtype.is_integer:
            return False
        info = np.iinfo(dtype.numpy_dtype)
        return all(info.min <= int(v) <= info.max for v in flat)

    def draw(self, d: Draw) -> np.ndarray:
        if d.dtype == DataType.DT_STRING:
            return np.array(self.value, dtype=object)
        return np.asarray(self.value).astype(d.dtype.numpy_dtype)


def _is_bytes(value: Any) -> bool:
    if isinstance(value, bytes):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(_is_bytes(v) for v in value)


def _kind(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    return "complex"


def literal(value: Any, dtype: DataType | None = None) -> Literal:
    """Explicit values; without ``dtype`` a hand case runs for every allowed dtype that holds them exactly."""
    return Literal(value, dtype)


def int_extremes(dtype: DataType | str) -> Literal:
    """The edges of an integer type: [min, min + 1, -1, 0, 1, max - 1, max] (no negatives when unsigned)."""
    dt = _as_dtype(dtype)
    info = np.iinfo(dt.numpy_dtype)
    picks = sorted({int(info.min), int(info.min) + 1, -1, 0, 1, int(info.max) - 1, int(info.max)})
    return Literal([v for v in picks if info.min <= v <= info.max], dt)


def float_specials(dtype: DataType | str | None = None) -> Literal:
    """NaN, +-inf, +-0, +-1, the smallest normal and the largest finite value (of float32 unless given)."""
    dt = _as_dtype(dtype) if dtype is not None else None
    finfo = ml_dtypes.finfo((dt or DataType.DT_FLOAT).numpy_dtype)
    return Literal([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, float(finfo.tiny), -float(finfo.tiny),
                    float(finfo.max), -float(finfo.max)], dt)


def _as_dtype(dtype: DataType | str) -> DataType:
    if isinstance(dtype, DataType):
        return dtype
    return DataType[dtype] if dtype.startswith("DT_") else DataType[f"DT_{dtype.upper()}"] \
        if f"DT_{dtype.upper()}" in DataType.__members__ else _BY_NAME[dtype]


_BY_NAME = {"float32": DataType.DT_FLOAT, "float64": DataType.DT_DOUBLE, "float16": DataType.DT_HALF,
            "float": DataType.DT_FLOAT, "double": DataType.DT_DOUBLE, "half": DataType.DT_HALF}


# -- inputs related to other inputs ---------------------------------------------------------------------
class AxisOf(Domain):
    """An axis of input ``name``: a scalar in [-rank, rank) (``out_of_range``: in [-rank - 1, rank], so
    sometimes just outside), or (``vector``) distinct axes in any order."""

    patterned = False

    def __init__(self, name: str, vector: bool = False, out_of_range: bool = False):
        self.name, self.vector, self.out_of_range = name, vector, out_of_range
        self.depends = (name,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer and dtype.numpy_dtype.kind == "i"

    def draw(self, d: Draw) -> np.ndarray:
        rank = d.rank_of(self.name)
        if not self.vector:
            if self.out_of_range:
                return np.asarray(int(d.rng.integers(-rank - 1, rank + 1)), d.dtype.numpy_dtype)
            axis = int(d.rng.integers(-rank, rank)) if rank else 0  # a scalar has no axis: TF's error
            return np.asarray(axis, d.dtype.numpy_dtype)
        k = int(d.rng.integers(0, rank + 1))
        axes = d.rng.permutation(rank)[:k]
        negative = d.rng.integers(0, 2, k).astype(bool)
        return np.where(negative, axes - rank, axes).astype(d.dtype.numpy_dtype)


def axis_of(name: str, vector: bool = False, out_of_range: bool = False) -> AxisOf:
    """A valid axis of input ``name`` (negative ones too); ``vector``: a set of axes; ``out_of_range``:
    sometimes one past either end (TF's range errors)."""
    return AxisOf(name, vector, out_of_range)


class ReductionAxes(Domain):
    """Reduction axes of input ``name``: mostly distinct axes (negative ones too), sometimes one scalar
    axis (possibly out of range) or a repeated axis (TF's errors)."""

    patterned = False

    def __init__(self, name: str):
        self.name = name
        self.depends = (name,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer and dtype.numpy_dtype.kind == "i"

    def draw(self, d: Draw) -> np.ndarray:
        rank, rng, dt = d.rank_of(self.name), d.rng, d.dtype.numpy_dtype
        choice = int(rng.integers(0, 10))
        if choice == 0:
            return np.asarray(int(rng.integers(-rank - 1, rank + 1)), dt)
        if choice == 1 and rank:
            a = int(rng.integers(0, rank))
            return np.asarray([a, a - rank], dt)
        return AxisOf(self.name, vector=True).draw(d)


def reduction_axes(name: str) -> ReductionAxes:
    return ReductionAxes(name)


class IndexInto(Domain):
    """Indices into dimension ``dim`` of input ``name`` (values in [0, size)), of the pattern shape."""

    def __init__(self, name: str, dim: int = 0):
        self.name, self.dim = name, dim
        self.depends = (name,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        source = np.shape(d.inputs[self.name])
        size = source[self.dim] if len(source) > abs(self.dim) else 0
        shape = d.shape or ()
        if size == 0:
            return np.zeros(shape, d.dtype.numpy_dtype)
        return d.rng.integers(0, size, shape).astype(d.dtype.numpy_dtype)


def index_into(name: str, dim: int = 0) -> IndexInto:
    """Valid indices into dimension ``dim`` of input ``name``."""
    return IndexInto(name, dim)


class ShapeOf(Domain):
    """The shape of input ``name`` as a vector (a valid ``shape`` input for Reshape, BroadcastTo …)."""

    patterned = False

    def __init__(self, name: str):
        self.name = name
        self.depends = (name,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        return np.asarray(np.shape(d.inputs[self.name]), d.dtype.numpy_dtype)


def shape_of(name: str) -> ShapeOf:
    return ShapeOf(name)


class ShapeVector(Domain):
    """A random valid shape: rank 0..``max_rank``, dims 0..``max_dim``."""

    patterned = False

    def __init__(self, max_rank: int = 4, max_dim: int = 4):
        self.max_rank, self.max_dim = max_rank, max_dim

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        rank = int(d.rng.integers(0, self.max_rank + 1))
        return d.rng.integers(0, self.max_dim + 1, rank).astype(d.dtype.numpy_dtype)


def shape(max_rank: int = 4, max_dim: int = 4) -> ShapeVector:
    """A shape tensor (a vector of non-negative dims)."""
    return ShapeVector(max_rank, max_dim)


class SortedIds(Domain):
    """Sorted segment ids below ``n`` (an int, or the name of a scalar input or an int attr), pattern shape."""

    def __init__(self, n: int | str):
        self.n = n
        self.depends = (n,) if isinstance(n, str) else ()

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        n = self.n if isinstance(self.n, int) else int(np.asarray(d.inputs.get(self.n, d.attrs.get(self.n))))
        shape = d.shape or ()
        if n <= 0:
            return np.zeros(shape, d.dtype.numpy_dtype)
        return np.sort(d.rng.integers(0, n, shape), axis=None).reshape(shape).astype(d.dtype.numpy_dtype)


def sorted_ids(n: int | str) -> SortedIds:
    """Sorted ids in [0, n): ``n`` an int or the name of the input/attr holding it."""
    return SortedIds(n)
