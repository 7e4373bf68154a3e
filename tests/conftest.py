"""Test configuration: kernel output checks on, TensorFlow's native kernels for the oracle."""
from __future__ import annotations

import os

# Every kernel output is checked against the node's dtype and build-time shape.
os.environ.setdefault("TFOPS_CHECK_KERNELS", "1")
# Compiled kernels ([jit] extra) load before the first run that can use them, so paths are deterministic.
os.environ.setdefault("TFOPS_JIT", "wait")
# TF oracle: native kernels (oneDNN replaces them with differently-checked ones), quiet logs.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# CI runs the property and live tests on a fixed seed, so a run is reproducible and a red CI means a
# real regression; a developer's run explores new inputs (TFOPS_HYPOTHESIS_PROFILE=ci pins it locally).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") or os.environ.get("TFOPS_HYPOTHESIS_PROFILE") == "ci":
    settings.load_profile("ci")

from tests.backends import BACKENDS, report_header  # noqa: E402


def pytest_report_header(config):
    return report_header()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if config.option.verbose < 0:  # -q hides the header: say once which backends ran
        terminalreporter.write_line(report_header())


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Every kernel test runs on NumPy, the strict array-API namespace and, where a GPU is visible, CuPy."""
    return request.param
