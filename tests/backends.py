"""The backends every kernel and conformance test runs on: one list, imported by everyone.

NumPy always; ``array_api_strict`` always (it proves a kernel uses nothing NumPy-only);
CuPy only where a CUDA GPU is visible.  Without a GPU the CuPy parameters are not generated
at all, so a run shows one stated reason (in the pytest header) instead of a skip per test.
"""
from __future__ import annotations

from tfops_py.backends.cupy_backend import gpu_count


def _cupy_unavailable_reason() -> str | None:
    """Why the CuPy backend is not tested here, or None when it is."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "CuPy is not installed (pip install 'tfops_py[cuda12]' on a machine with an NVIDIA GPU)"
    if gpu_count() == 0:
        return "CuPy is installed but no CUDA GPU is visible"
    return None


CUPY_SKIP_REASON: str | None = _cupy_unavailable_reason()
HAS_GPU: bool = CUPY_SKIP_REASON is None

# Order matters only for readability of test ids: numpy first.
BACKENDS: list[str] = ["numpy", "array_api_strict"] + ([] if CUPY_SKIP_REASON else ["cupy"])


def report_header() -> str:
    """The line pytest prints once at the start of a run."""
    tested = ", ".join(BACKENDS)
    if CUPY_SKIP_REASON:
        return f"tfops_py backends: {tested}; cupy not tested: {CUPY_SKIP_REASON}"
    return f"tfops_py backends: {tested} (GPU visible)"
