"""A user's script type-checks against the package and its generated op stub.

pyright and mypy see no false errors in ``user_script.py`` (quick start, multi-output ops,
attrs setters and keywords, ops named like typing names such as ``ops.Any``, ``ops.internal``), and
both report the mistakes in ``MISTAKES`` on the right lines.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USER_SCRIPT = Path(__file__).with_name("user_script.py")

# line -> what is wrong; each line must be reported by both checkers
MISTAKES = {
    5: "a misspelled setter: ops.MatMul.TransposeBB(True)",
    6: "a misspelled attr keyword: transpose_bb=True",
    7: "a misspelled op class: ops.MatMull",
    8: "the scope forgotten: ops.MatMul(x, x)",
    9: "a misspelled output member: .products",
}
BAD_SCRIPT = """from tfops_py import DT_FLOAT, Scope, ops

root = Scope.NewRootScope()
x = ops.Placeholder(root, DT_FLOAT)
a = ops.MatMul(root, x, x, ops.MatMul.TransposeBB(True))
b = ops.MatMul(root, x, x, transpose_bb=True)
c = ops.MatMull(root, x, x)
d = ops.MatMul(x, x)
e = ops.MatMul(root, x, x).products
"""


def _pyright(path: Path, tmp_path: Path) -> list[int]:
    exe = shutil.which("pyright")
    if exe is None:
        pytest.skip("pyright is not installed (test extra)")
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"extraPaths": [str(ROOT)], "pythonVersion": "3.10"}))
    proc = subprocess.run([exe, "--outputjson", str(path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    report = json.loads(proc.stdout)
    return [d["range"]["start"]["line"] + 1 for d in report["generalDiagnostics"] if d["severity"] == "error"]


_MYPY_CACHE: list[Path] = []  # one cache for the module's runs: the 12k-line stub is analysed once


def _mypy(path: Path, tmp_path: Path) -> list[int]:
    pytest.importorskip("mypy", reason="mypy is not installed (test extra)")
    if not _MYPY_CACHE:
        _MYPY_CACHE.append(tmp_path / ".mypy_cache")
    env = dict(os.environ, MYPYPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
                           "--cache-dir", str(_MYPY_CACHE[0]), "--python-version", "3.10", str(path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    name = re.escape(path.name)
    return [int(m.group(1)) for m in re.finditer(rf"^.*{name}:(\d+): error:", proc.stdout, re.M)]


@pytest.mark.parametrize("checker", [_pyright, _mypy], ids=["pyright", "mypy"])
def test_user_script_has_no_false_errors(checker, tmp_path):
    script = tmp_path / "user_script.py"
    shutil.copy(USER_SCRIPT, script)
    assert checker(script, tmp_path) == []


@pytest.mark.parametrize("checker", [_pyright, _mypy], ids=["pyright", "mypy"])
def test_real_mistakes_are_reported(checker, tmp_path):
    script = tmp_path / "bad_script.py"
    script.write_text(BAD_SCRIPT)
    flagged = set(checker(script, tmp_path))
    missed = {line: why for line, why in MISTAKES.items() if line not in flagged}
    assert not missed, f"not reported: {missed}"
    assert flagged <= set(MISTAKES), f"false errors on lines {sorted(flagged - set(MISTAKES))}"


def test_user_script_runs():
    proc = subprocess.run([sys.executable, str(USER_SCRIPT)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr[-2000:]
