"""Every fenced ``python`` block in README.md and docs/ runs.

The blocks of one page run in order in one namespace (a page reads as one session), in a
temporary directory.  A block that is deliberately not runnable starts with a comment line
``# not run: <why>`` (find them with ``grep -rn "# not run:" docs README.md``); keep those rare.
A block that imports TensorFlow runs where TensorFlow is importable.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
NOT_RUN = "# not run:"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the block's first code line, dedented code) per ``python`` fence."""
    blocks = []
    for m in _FENCE.finditer(text):
        info = m.group("info").strip().split()
        if not info or info[0] not in ("python", "py", "python3"):
            continue
        indent = len(m.group("indent"))
        body = "".join(line[indent:] for line in m.group("body").splitlines(keepends=True))
        blocks.append((text.count("\n", 0, m.start("body")) + 1, body))
    return blocks


def _pages_with_code() -> list[Path]:
    return [p for p in PAGES if python_blocks(p.read_text())]


@pytest.mark.parametrize("page", _pages_with_code(), ids=lambda p: str(p.relative_to(ROOT)))
def test_page_snippets_run(page: Path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for line, code in python_blocks(page.read_text()):
        first = code.lstrip().splitlines()[0] if code.strip() else ""
        if first.startswith(NOT_RUN):
            assert first[len(NOT_RUN):].strip(), f"{page.name}:{line}: say why the block is not run"
            continue
        if re.search(r"^\s*(import|from) tensorflow\b", code, re.M):
            pytest.importorskip("tensorflow")
        # Padding keeps tracebacks pointing at the line in the Markdown file.
        compiled = compile("\n" * (line - 1) + code, str(page), "exec")
        exec(compiled, namespace)  # noqa: S102 - the docs' own code


def test_fence_parser_finds_indented_and_skips_other_languages():
    text = "x\n```python\na = 1\n```\n- item\n\n    ```python\n    b = 2\n    ```\n```bash\nls\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n"), (8, "b = 2\n")]


def test_not_run_markers_are_rare():
    marked = [(p.name, line) for p in PAGES for line, code in python_blocks(p.read_text())
              if code.lstrip().startswith(NOT_RUN)]
    total = sum(len(python_blocks(p.read_text())) for p in PAGES)
    assert len(marked) * 4 <= total, f"more than one block in four is not run: {marked}"


if os.environ.get("TFOPS_DOCS_LIST"):  # pragma: no cover - a debugging aid
    for _p in PAGES:
        print(_p, [line for line, _ in python_blocks(_p.read_text())])
