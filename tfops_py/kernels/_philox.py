"""Philox4x32-10 as TF's ``PhiloxRandom`` runs it (``philox_random.h``), vectorised over counter blocks.

A generator is a value: a key ``(k0, k1)`` and a 128-bit counter (word 0 lowest).  Each call of TF's
generator turns the counter into one block of four 32-bit words (ten rounds, the key raised between
rounds) and adds one to the counter; ``Skip(n)`` adds ``n`` the way TF does (64-bit ``n``, its carry
into the upper half).  Here :func:`blocks` computes many consecutive blocks at once and
:func:`blocks_at` the blocks at arbitrary offsets (what TF's per-output ``Skip`` reaches), on any
array namespace: the arithmetic is uint64 products of 32-bit words, which never overflow.  On NumPy
the blocks are computed in cache-sized chunks on every core.

``GuardedPhilox`` is TF's ``GuardedPhiloxRandom``: the seeds (0, 0 meaning fresh random ones), and
``ReserveSamples*`` handing out a copy of the generator while skipping the master ahead.
"""
from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from tfops_py.kernels._parallel import parallel_for

MASK32 = 0xFFFFFFFF
_U64 = (1 << 64) - 1
_U128 = (1 << 128) - 1
_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # round multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # key increments
_ROUNDS = 10
_CHUNK = 8192  # blocks per NumPy pass: four uint64 words and two products stay in L2


class Philox:
    """TF's ``PhiloxRandom`` state: ``key`` (two 32-bit words) and ``counter`` (a 128-bit integer)."""

    __slots__ = ("key", "counter")

    def __init__(self, counter: int, key: tuple[int, int]):
        self.counter = counter & _U128
        self.key = (key[0] & MASK32, key[1] & MASK32)

    @classmethod
    def from_seeds(cls, seed: int, seed2: int) -> Philox:
        """``PhiloxRandom(seed_lo, seed_hi)``: the key from ``seed``, counter words 2-3 from ``seed2``."""
        seed, seed2 = seed & _U64, seed2 & _U64
        return cls(seed2 << 64, (seed & MASK32, seed >> 32))

    @classmethod
    def from_words(cls, counter: tuple[int, int, int, int], key: tuple[int, int]) -> Philox:
        return cls(sum((w & MASK32) << (32 * i) for i, w in enumerate(counter)), key)

    @property
    def counter_words(self) -> tuple[int, int, int, int]:
        c = self.counter
        return c & MASK32, (c >> 32) & MASK32, (c >> 64) & MASK32, c >> 96

    def skip(self, count: int) -> Philox:
        """``Skip(count)``: TF adds a 64-bit ``count`` to the low half and carries one into the high half
        (a carry out of ``count``'s own upper word is dropped, as TF drops it)."""
        c0, c1, c2, c3 = self.counter_words
        lo, hi = count & MASK32, (count >> 32) & MASK32
        c0 = (c0 + lo) & MASK32
        if c0 < lo:
            hi = (hi + 1) & MASK32
        c1 = (c1 + hi) & MASK32
        if c1 < hi:
            c2 = (c2 + 1) & MASK32
            if c2 == 0:
                c3 = (c3 + 1) & MASK32
        return Philox.from_words((c0, c1, c2, c3), self.key)

    def block(self) -> list[int]:
        """The four words of the next block (host integers); the generator itself does not move."""
        return [int(w) for w in blocks(np, self, 1)[0]]

    def __repr__(self) -> str:
        return f"Philox(counter={self.counter:#x}, key=({self.key[0]:#x}, {self.key[1]:#x}))"


# -- the rounds ----------------------------------------------------------------------------------------
def _counter_words(xp: Any, counter: int, offsets: Any) -> list[Any]:
    """The four counter words of ``counter + offsets`` (uint64 arrays of 32-bit values; offsets < 2**63)."""
    words = [(counter >> (32 * i)) & MASK32 for i in range(4)]
    lo = (offsets & MASK32) + words[0]
    out = [lo & MASK32]
    carry = lo >> 32
    mid = (offsets >> 32) + carry + words[1]
    out.append(mid & MASK32)
    carry = mid >> 32
    high = carry + words[2]
    out.append(high & MASK32)
    out.append(((high >> 32) + words[3]) & MASK32)
    return out


def _rounds(c0: Any, c1: Any, c2: Any, c3: Any, key: tuple[int, int]) -> tuple[Any, Any, Any, Any]:
    """Ten Philox rounds on uint64 arrays holding 32-bit words (any array namespace)."""
    k0, k1 = key
    for _ in range(_ROUNDS):
        p0 = c0 * _M0
        p1 = c2 * _M1
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & MASK32
        k0, k1 = (k0 + _W0) & MASK32, (k1 + _W1) & MASK32
    return c0, c1, c2, c3


def blocks_at(xp: Any, gen: Philox, offsets: Any, serial: bool = False) -> Any:
    """uint32 ``[len(offsets), 4]``: the block TF's generator yields after ``Skip(offset)``, per offset
    (``offsets``: a uint64 array of block offsets below 2**63).  ``serial``: NumPy stays on the calling
    thread (for callers that already share work out over the threads)."""
    if xp is np:
        return _numpy_blocks(gen, np.asarray(offsets, np.uint64), serial=serial)
    c0, c1, c2, c3 = _counter_words(xp, gen.counter, offsets)
    words = _rounds(c0, c1, c2, c3, gen.key)
    return xp.astype(xp.stack(words, axis=1), xp.uint32)


def blocks(xp: Any, gen: Philox, n: int) -> Any:
    """uint32 ``[n, 4]``: the next ``n`` blocks of ``gen`` (consecutive counters, as repeated calls give)."""
    if xp is np:
        return _numpy_blocks(gen, None, n)
    return blocks_at(xp, gen, xp.arange(n, dtype=xp.uint64))


def words(xp: Any, gen: Philox, n: int) -> Any:
    """The first ``n`` 32-bit words of ``gen``'s next blocks, in order (uint32 ``[n]``)."""
    return xp.reshape(blocks(xp, gen, -(-n // 4)), (-1,))[:n]


def philox_blocks(counter: int, key: tuple[int, int], count: int) -> np.ndarray:
    """``count`` blocks for counters ``counter, counter + 1, ...`` (mod 2**128), on the host: uint32 [count, 4]."""
    return blocks(np, Philox(counter, key), count)


# -- NumPy: cache-sized chunks on every core -----------------------------------------------------------
def _numpy_rounds(gen: Philox, offsets: np.ndarray, out: np.ndarray) -> None:
    """Blocks at ``offsets`` (at most one chunk) into ``out`` (uint32 ``[len(offsets), 4]``), in place."""
    m, shift = np.uint64(MASK32), np.uint64(32)
    c = np.empty((4, offsets.shape[0]), np.uint64)
    for i, w in enumerate(_counter_words(np, gen.counter, offsets)):
        c[i] = w
    c0, c1, c2, c3 = c
    q0, q1 = np.empty_like(c0), np.empty_like(c0)
    k0, k1 = gen.key
    for _ in range(_ROUNDS):
        np.multiply(c0, np.uint64(_M0), out=q0)
        np.multiply(c2, np.uint64(_M1), out=q1)
        np.right_shift(q1, shift, out=c0)
        np.bitwise_xor(c0, c1, out=c0)
        np.bitwise_xor(c0, np.uint64(k0), out=c0)
        np.right_shift(q0, shift, out=c2)
        np.bitwise_xor(c2, c3, out=c2)
        np.bitwise_xor(c2, np.uint64(k1), out=c2)
        np.bitwise_and(q1, m, out=c1)
        np.bitwise_and(q0, m, out=c3)
        k0, k1 = (k0 + _W0) & MASK32, (k1 + _W1) & MASK32
    out[...] = c.T


def serial_words(gen: Philox, start: int, stop: int) -> np.ndarray:
    """The words of blocks ``start .. stop - 1`` after ``gen``, on the calling thread (uint32 ``[4 * n]``)."""
    out = np.empty((stop - start, 4), np.uint32)
    for a in range(start, stop, _CHUNK):
        b = min(stop, a + _CHUNK)
        _numpy_rounds(gen, np.arange(a, b, dtype=np.uint64), out[a - start:b - start])
    return out.reshape(-1)


def _numpy_blocks(gen: Philox, offsets: np.ndarray | None, n: int | None = None, serial: bool = False) -> np.ndarray:
    count = len(offsets) if offsets is not None else int(n or 0)
    out = np.empty((count, 4), np.uint32)

    def run(start: int, stop: int) -> None:
        for a in range(start, stop, _CHUNK):
            b = min(stop, a + _CHUNK)
            off = offsets[a:b] if offsets is not None else np.arange(a, b, dtype=np.uint64)
            _numpy_rounds(gen, off, out[a:b])

    if serial:
        run(0, count)
    else:
        parallel_for(run, count, min_size=4 * _CHUNK)
    return out


# -- TF's GuardedPhiloxRandom --------------------------------------------------------------------------
def fresh_seeds() -> tuple[int, int]:
    """Two random 64-bit seeds (TF's ``random::New64``)."""
    return secrets.randbits(64), secrets.randbits(64)


class GuardedPhilox:
    """``GuardedPhiloxRandom`` initialised with (seed, seed2); (0, 0) draws two fresh random seeds."""

    def __init__(self, seed: int, seed2: int):
        seed, seed2 = seed & _U64, seed2 & _U64
        if seed == 0 and seed2 == 0:
            seed, seed2 = fresh_seeds()
        self.gen = Philox.from_seeds(seed, seed2)

    def reserve_samples128(self, n: int) -> Philox:
        """A copy of the generator; the master skips ahead by ``n`` blocks."""
        local = self.gen
        self.gen = local.skip(n)
        return local

    def reserve_samples32(self, n: int) -> PhiloxStream:
        """A stream for ``n`` words; the generator skips ahead by ``ceil(n / 4)`` blocks."""
        return PhiloxStream(self.reserve_samples128((n + 3) // 4))

    def reserve_random_outputs(self, output_count: int, multiplier: int) -> Philox:
        """``ReserveRandomOutputs``: room for ``multiplier`` blocks per output."""
        return self.reserve_samples128(output_count * multiplier)


class PhiloxStream:
    """A generator read word by word in order (TF's ``SingleSampleAdapter`` / ``SimplePhilox``)."""

    def __init__(self, gen: Philox):
        self.gen = gen

    def words(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit words (uint32); a fresh stream starts at a block boundary."""
        count = -(-n // 4)
        out = blocks(np, self.gen, count).reshape(-1)[:n]
        self.gen = self.gen.skip(count)
        return out

    def rand_double(self) -> float:
        """``SimplePhilox::RandDouble``: 52 mantissa bits from two words, in [0, 1)."""
        x0, x1 = (int(w) for w in self.words(2))
        return (((x0 & 0xFFFFF) << 32) | x1) / float(1 << 52)
