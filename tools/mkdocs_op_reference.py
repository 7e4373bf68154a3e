"""MkDocs hook: the op class reference (``api/ops/*``), generated from the op definitions at build time.

One page per TF header group (array_ops, math_ops, ...): each class's signature, Attrs setters with
their defaults, outputs, graph op type, and its kernel family page when it has a kernel.  Nothing is
committed: the pages cannot go stale.
"""
from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from mkdocs.structure.files import File

import tfops_py  # noqa: F401  (registers kernels)
from tfops_py.framework.op_def import cc_classes
from tfops_py.kernels.registry import find_kernel
from tfops_py.ops._wrapper import py_name

_DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


def _family_link(op: str) -> str:
    fn = find_kernel(op, "numpy")
    if fn is None:
        return "no kernel yet (builds; running it raises `UnimplementedError`)"
    module = fn.__module__.rsplit(".", 1)[-1].lstrip("_").replace("_impl", "")
    family = fn.__module__.split(".")[2] if fn.__module__.count(".") >= 3 else "kernels"
    page = f"ops/{module}.md"
    if os.path.exists(os.path.join(_DOCS, page)):
        return f"kernel in `{fn.__module__}` ([{module}](../../{page}))"
    return f"kernel in `{fn.__module__}` ({family} family)"


def _entry(cc: Any) -> list[str]:
    params = ["scope", *(py_name(p.name) for p in cc.params)] + (["attrs=None"] if cc.setters else [])
    name = f"internal.{cc.class_name}" if cc.internal else cc.class_name
    lines = [f"## {cc.class_name}", "", "```text", f"ops.{name}({', '.join(params)})", "```", "",
             f"Graph op `{cc.op_name}`; C++ `tensorflow::ops::{'internal::' if cc.internal else ''}{cc.class_name}`"
             + (f"; aliases: {', '.join(cc.aliases)}" if cc.aliases else "") + ".", "",
             f"- {_family_link(cc.op_name)}",
             "- outputs: " + (", ".join(f"`{py_name(o.member)}`" + (" (list)" if o.is_list else "")
                                        for o in cc.outputs) or "none")]
    if cc.setters:
        lines += ["", "| setter | keyword | default |", "|---|---|---|"]
        lines += [f"| `{s.setter}` | `{s.field}` | `{s.cpp_default}` |" for s in cc.setters]
    return lines + [""]


def _pages() -> dict[str, str]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for cc in sorted(cc_classes(), key=lambda c: c.class_name):
        groups[cc.group].append(cc)
    pages = {f"api/ops/{g}.md": "\n".join([f"# {g}", "", f"{len(ccs)} op classes.", ""]
                                          + [line for cc in ccs for line in _entry(cc)])
             for g, ccs in sorted(groups.items())}
    index = ["# Op classes", "", "Generated from TF 2.21's op definitions when the site is built, one page per "
             "TF header group. Type stubs with the same signatures: `tfops_py/ops/__init__.pyi`.", "",
             "| group | classes |", "|---|---|"]
    index += [f"| [{g}]({g}.md) | {len(ccs)} |" for g, ccs in sorted(groups.items())]
    pages["api/ops/index.md"] = "\n".join(index) + "\n"
    return pages


def on_files(files: Any, config: Any) -> Any:
    for path, text in _pages().items():
        files.append(File.generated(config, path, content=text))
    return files
