"""Write the gradient coverage table of docs/gradients.md from the gradient registry.

    python tools/gen_gradient_table.py

Replaces the text between the BEGIN/END markers in docs/gradients.md.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import tfops_py  # noqa: E402,F401  (registers kernels)
from tfops_py.gradients import GradOpRegistry, gradient_modules  # noqa: E402
from tfops_py.kernels.registry import registered_kernel_ops  # noqa: E402

DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "gradients.md")
BEGIN = "<!-- BEGIN GENERATED: tools/gen_gradient_table.py -->"
END = "<!-- END GENERATED -->"


def table() -> str:
    registry = GradOpRegistry.Global()
    entries = registry.registered()
    kernels = registered_kernel_ops()
    modules = gradient_modules()
    beyond = {op: text for m in modules for op, text in getattr(m, "BEYOND_TF_CC", {}).items()}
    changed = {op: text for m in modules for op, text in getattr(m, "CHANGED_FROM_TF_CC", {}).items()}
    with_fn = [op for op, fn in entries.items() if fn is not None]
    lines = [
        BEGIN,
        "",
        f"{len(entries)} op types registered: {len(with_fn)} with a gradient function, "
        f"{len(entries) - len(with_fn)} marked as having none (NoGradient flows to their inputs); "
        f"{len(beyond)} of them beyond TF's C++ API. "
        f"{sum(op in kernels for op in with_fn)} of the differentiable ones have a forward kernel today.",
        "",
        "| op type | gradient | module | forward kernel | differs from TF C++ |",
        "|---|---|---|---|---|",
    ]
    for op in sorted(entries):
        grad = "yes" if entries[op] is not None else "none"
        module = registry.origin(op).rsplit(".", 1)[-1]
        note = beyond.get(op) or changed.get(op) or ""
        lines.append(f"| {op} | {grad} | {module} | {'yes' if op in kernels else '—'} | {note} |")
    lines += ["", END]
    return "\n".join(lines)


def main() -> None:
    with open(DOC) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOC} lacks the {BEGIN} / {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(DOC, "w") as f:
        f.write(head + table() + tail)
    print(f"gradient table -> {DOC}")


if __name__ == "__main__":
    main()
