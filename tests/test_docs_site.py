"""The documentation site builds in strict mode, and any warning at all fails the test.

``mkdocs build --strict`` aborts on warnings of its own, but plugins (autorefs, mkdocstrings) log
some warnings that only show in the log, so the log is checked too (and ``-q`` is not used: it
hides them).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")


def test_site_builds_strict_without_warnings(tmp_path):
    pytest.importorskip("mkdocs", reason="docs extra not installed")
    pytest.importorskip("mkdocstrings", reason="docs extra not installed")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    log = proc.stdout + proc.stderr
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert proc.returncode == 0 and not warnings, "\n".join(warnings) or log[-4000:]
    assert (tmp_path / "index.html").exists()
    assert (tmp_path / "api" / "ops" / "index.html").exists(), "the op class reference was not generated"
