"""The ``fft_length`` domain of the real transforms' conformance cases, and the reference for outputs TF leaves
unwritten."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance.domains import Domain, Draw
from tfops_py.framework.dtypes import DataType


class FFTLength(Domain):
    """An ``fft_length`` the raw op takes for input ``name``: each length at most the input's dimension (RFFT
    crops), the last at most ``2 (L - 1)`` for IRFFT (it reads ``n // 2 + 1`` entries); sometimes exactly the
    input's, sometimes 0."""

    patterned = False

    def __init__(self, name: str, rank: int, forward: bool):
        self.name, self.rank, self.forward = name, rank, forward
        self.depends = (name,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype == DataType.DT_INT32

    def draw(self, d: Draw) -> np.ndarray:
        shape = np.shape(d.inputs[self.name])
        inner = list(shape[len(shape) - self.rank:]) if len(shape) >= self.rank else [4] * self.rank
        out = []
        for i, size in enumerate(inner):
            last = i == self.rank - 1
            top = 2 * (size - 1) if last and not self.forward else size
            top = max(top, 0)
            choice = int(d.rng.integers(0, 4))
            out.append(top if choice == 0 else int(d.rng.integers(0, top + 1)) if top else 0)
        return np.asarray(out, np.int32)


def fft_length(name: str, rank: int, forward: bool) -> FFTLength:
    return FFTLength(name, rank, forward)


def zeros_output(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's checks, then zeros where TF leaves the output of an empty input unwritten."""
    return [np.zeros_like(out) for out in run_tf(op, inputs, attrs)]
