"""Timing shared by the benchmarks: ours and TF alternate, so both see the same background load."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import NamedTuple


class Timing(NamedTuple):
    ours_ms: float  # median
    tf_ms: float
    ours_min_ms: float
    tf_min_ms: float
    ours_cpu_ms: float  # median process CPU time: comparable even when other work loads the cores
    tf_cpu_ms: float

    @property
    def ratio(self) -> float:
        return self.ours_ms / self.tf_ms

    @property
    def min_ratio(self) -> float:
        return self.ours_min_ms / self.tf_min_ms

    @property
    def cpu_ratio(self) -> float:
        return self.ours_cpu_ms / self.tf_cpu_ms


def time_pair(ours: Callable[[], object], theirs: Callable[[], object], reps: int, warmup: int = 3,
              pause: float = 0.0) -> Timing:
    """Median and best of ``reps`` alternating runs; ``pause`` idles before each (lets TF's spinning threads sleep)."""
    for _ in range(warmup):
        ours()
        theirs()
    wall: tuple[list[float], list[float]] = ([], [])
    cpu: tuple[list[float], list[float]] = ([], [])
    for _ in range(reps):
        for k, fn in enumerate((ours, theirs)):
            if pause:
                time.sleep(pause)
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    med = statistics.median
    return Timing(1e3 * med(wall[0]), 1e3 * med(wall[1]), 1e3 * min(wall[0]), 1e3 * min(wall[1]),
                  1e3 * med(cpu[0]), 1e3 * med(cpu[1]))


def header(width: int) -> str:
    return (f"{'name':{width}s} {'ours_ms':>9s} {'tf_ms':>9s} {'ratio':>6s}   "
            f"{'ours_min':>9s} {'tf_min':>9s} {'ratio':>6s}")


def row(name: str, t: Timing, width: int) -> str:
    return (f"{name:{width}s} {t.ours_ms:9.3f} {t.tf_ms:9.3f} {t.ratio:6.2f}   "
            f"{t.ours_min_ms:9.3f} {t.tf_min_ms:9.3f} {t.min_ratio:6.2f}")


def cpu_header(width: int) -> str:
    """:func:`header` plus the CPU-time columns (the comparable figure on a loaded machine)."""
    return header(width) + f"   {'ours_cpu':>9s} {'tf_cpu':>9s} {'cpu_ratio':>9s}"


def cpu_row(name: str, t: Timing, width: int) -> str:
    return row(name, t, width) + f"   {t.ours_cpu_ms:9.2f} {t.tf_cpu_ms:9.2f} {t.cpu_ratio:9.2f}"


def kernel_session(root, **kwargs):
    """A ClientSession for timing kernels on constant inputs: constant folding off (it would evaluate
    the op once, when the plan is built, and every timed Run would only return the folded result)."""
    from tfops_py import ClientSession
    from tfops_py.client.session_options import ConfigProto, GraphOptions, RewriterConfig, SessionOptions

    options = SessionOptions(config=ConfigProto(graph_options=GraphOptions(
        RewriterConfig(constant_folding=RewriterConfig.OFF))))
    return ClientSession(root, options, **kwargs)
