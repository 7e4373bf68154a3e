"""RandomShuffle and StatelessShuffle: TF's Fisher-Yates permutation, computed without a loop over elements.

TF shuffles the first dimension in place (``shuffle_common.h``): for ``i = 0 .. n-2`` it swaps positions
``i`` and ``j_i = i + u_i % (n - i)``, with ``u_i`` the i-th 32-bit word of the generator.  The swaps
depend on each other, but the final permutation has a closed form (:func:`fisher_yates`): what lands
in position ``i`` is what position ``j_i`` held just before step ``i``, which is either never touched
before (the original element) or put there by the latest earlier step with the same target, and so
on: a forest of "who brought it" links resolved by pointer doubling in ``O(n log n)`` vectorised work.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, literal, one_of, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import register_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels import _philox
from tfops_py.kernels._philox import Philox
from tfops_py.kernels.random import _cases
from tfops_py.kernels.random._base import generator
from tfops_py.kernels.random.stateless_random_ops import check_algorithm, key_counter_alg
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "random"


def fisher_yates(xp: Any, words: Any, n: int) -> Any:
    """int64 ``perm`` with ``shuffled[i] = original[perm[i]]`` after TF's ``ShuffleRange`` over ``range(n)``,
    driven by the uint32 ``words`` (at least ``n - 1``)."""
    t = xp.arange(n, dtype=xp.int64)
    u = xp.astype(words[:n - 1], xp.int64)
    j = xp.concat([t[:n - 1] + u % (n - t[:n - 1]), xp.asarray([n - 1], dtype=xp.int64)])  # step n-1: no swap
    order = xp.argsort(j, stable=True)  # steps grouped by target, earliest first
    js = xp.take(j, order)
    same = js[1:] == js[:-1]
    prev_sorted = xp.concat([xp.asarray([-1], dtype=xp.int64), xp.where(same, order[:-1], -1)])
    prev = xp.take(prev_sorted, xp.argsort(order))  # latest earlier step with the same target
    # The latest step before t that targeted position t brought what position t holds at step t.
    pos = xp.searchsorted(js, t, side="right") - 1
    safe = xp.clip(pos, 0, n - 1)
    last = xp.where((pos >= 0) & (xp.take(js, safe) == t), xp.take(order, safe), -1)
    parent = xp.where(last == t, prev, last)
    origin = xp.where(parent >= 0, parent, t)  # resolved to the original index by doubling
    while True:
        nxt = xp.take(origin, origin)
        if bool(xp.all(nxt == origin)):
            break
        origin = nxt
    return xp.where(prev >= 0, xp.take(origin, xp.clip(prev, 0, n - 1)), j)


def shuffle_rows(ctx: KernelContext, value: Any, start: Philox | None, reserve: Any = None) -> Any:
    """``RandomShuffle``: ``value`` with its first dimension permuted; ``start`` is the generator (or
    ``reserve(samples)`` gives it, called only when there is something to shuffle)."""
    shape = tuple(value.shape)
    size = shape[0] if shape else 1
    if size <= 1 or int(np.prod(shape)) <= 1:
        return value
    gen = start if start is not None else reserve(size - 1)
    is_host_object = isinstance(value, np.ndarray) and value.dtype == object
    xp = np if is_host_object else ctx.xp
    perm = fisher_yates(xp, _philox.words(xp, gen, size - 1), size)
    return xp.take(value, perm, axis=0)


@register_kernel("RandomShuffle")
def _random_shuffle(ctx: KernelContext, value: Any) -> Any:
    return shuffle_rows(ctx, value, None, lambda samples: generator(ctx).reserve_samples128((samples + 3) // 4))


@register_kernel("StatelessShuffle")
def _stateless_shuffle(ctx: KernelContext, value: Any, key: Any, counter: Any, alg: Any) -> Any:
    gen, algorithm = key_counter_alg(ctx, key, counter, alg)
    check_algorithm(ctx, algorithm)
    return shuffle_rows(ctx, value, gen)


register_shape("RandomShuffle", "StatelessShuffle")(unchanged_shape)


# -- conformance -------------------------------------------------------------------------------------
_ROWS = [(1,), (2,), (3,), (5,), (4, 3), (17, 2, 2), (1, 6), (0, 3), (), (1000,)]
_V2 = {"key": literal([0xDEAD_BEEF_0123_4567], DataType.DT_UINT64), "counter": literal([9, 2**63], DataType.DT_UINT64),
       "alg": literal(1, DataType.DT_INT32)}
conformance("RandomShuffle", value=values(), seed=one_of(7, -3, 2**40 + 1), seed2=one_of(0, 11, 2**62), compare="exact",
            cases=[case({"seed": 5, "seed2": 9, "value": values(), "T": DataType.DT_INT32}, shapes={"value": s},
                        id=f"RandomShuffle/rows-{'x'.join(map(str, s)) or 'scalar'}") for s in _ROWS])
conformance("StatelessShuffle", value=values(), key=_cases.key(), counter=_cases.counter(), alg=_cases.algorithm(),
            compare="exact", cases=[case({**_V2, "value": values(), "T": DataType.DT_INT32}, shapes={"value": s},
                                         id=f"StatelessShuffle/rows-{'x'.join(map(str, s)) or 'scalar'}")
                                    for s in _ROWS] + [
                case({**_V2, "value": literal([1.0, 2.0, 3.0]), "alg": literal(2, DataType.DT_INT32)},
                     id="StatelessShuffle/threefry"),
                case({**_V2, "value": literal([1.0, 2.0, 3.0]), "key": literal([1, 2], DataType.DT_UINT64)},
                     id="StatelessShuffle/key-of-two"),
                case({**_V2, "value": literal([1.0, 2.0, 3.0]), "key": literal(1, DataType.DT_UINT64)},
                     id="StatelessShuffle/scalar-key"),
                case({**_V2, "value": literal([1.0, 2.0, 3.0]), "alg": literal([1], DataType.DT_INT32)},
                     id="StatelessShuffle/alg-vector"),
                case({**_V2, "value": literal([1.0]), "alg": literal(2, DataType.DT_INT32)},
                     id="StatelessShuffle/threefry-one-row")])
