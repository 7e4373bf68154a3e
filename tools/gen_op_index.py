"""Write the op index and the divergence tables from the registries and the conformance declarations.

    python tools/gen_op_index.py

* ``docs/op_index.md``: headline coverage (ops with kernels / ops TF runs on CPU, gradients / TF's),
  per op with a kernel its family, shape function, kernels per backend, gradient, golden and live
  cases and divergences, then every TF CPU op without a kernel here, grouped by family.
* ``docs/divergences.md`` and each family page ``docs/ops/<family>.md``: the declared divergences,
  between the ``BEGIN GENERATED`` / ``END GENERATED`` markers.

Needs no TensorFlow (``tfops_py/_data/tf_kernels.json.gz`` holds TF's kernel and gradient registries).
``tests/conformance/test_op_index.py`` fails when a committed file is stale.
"""
from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tfops_py  # noqa: E402,F401  (registers kernels, gradients and declarations)
from tests.conformance.cases import NUMPY_TYPES, type_levels  # noqa: E402
from tests.conformance.check import backend_holds, cases_by_op  # noqa: E402
from tfops_py.conformance import Divergence, divergences, spec_of, specs  # noqa: E402
from tfops_py.conformance import tf_registry  # noqa: E402
from tfops_py.framework.dtypes import DataType  # noqa: E402
from tfops_py.framework.op_def import cc_classes, get_op_def, has_op_def  # noqa: E402
from tfops_py.framework.shape_inference import registered_shape_ops  # noqa: E402
from tfops_py.gradients import registered_gradient_ops  # noqa: E402
from tfops_py.kernels import registry as kernel_registry  # noqa: E402

DOCS = ROOT / "docs"
INDEX = DOCS / "op_index.md"
DIVERGENCES = DOCS / "divergences.md"
BEGIN = "<!-- BEGIN GENERATED: tools/gen_op_index.py -->"
END = "<!-- END GENERATED -->"


# -- facts ---------------------------------------------------------------------------------------------
def kernel_ops() -> list[str]:
    return sorted(kernel_registry.registered_kernel_ops())


def _backends(op: str) -> dict[str, str]:
    """Per backend: ``generic`` (the array-API kernel), ``own`` (a backend-specific one) or —."""
    generic = kernel_registry.find_kernel(op, "")  # no backend has this name: the generic kernel or None

    def cell(backend: str) -> str:
        fn = kernel_registry.find_kernel(op, backend)
        return "own" if fn is not None and fn is not generic else "generic" if generic is not None else "—"

    return {"numpy": cell("numpy"), "array_api": cell("array_api_strict"), "cupy": cell("cupy")}


def family_of(op: str) -> str:
    spec = spec_of(op)
    if spec is not None:
        return spec.family
    fn = kernel_registry.find_kernel(op, "numpy")
    return fn.__module__.rsplit(".", 1)[-1] if fn is not None else ""


def page(family: str) -> Path | None:
    p = DOCS / "ops" / f"{family}.md"
    return p if p.exists() else None


def family_title(family: str) -> str:
    p = page(family)
    if p is None:
        return family
    first = p.read_text().splitlines()[0]
    return first.lstrip("# ").strip()


def _array_api_missing(op: str) -> list[str]:
    """The dtypes TF's CPU kernels take for the op that the array-API standard has no dtype for."""
    if not has_op_def(op):
        return []
    spec = spec_of(op)
    op_def = get_op_def(op)
    if spec is None:
        missing: set[DataType] = set()
        for attr in op_def.attrs:
            if attr.type == "type":
                allowed = set(attr.allowed) if attr.allowed is not None else set(NUMPY_TYPES)
                cpu = tf_registry.cpu_types(op, attr.name)
                missing |= {t for t in allowed if (cpu is None or t in cpu) and not _held(t)}
        return sorted(t.short_name for t in missing)
    levels = type_levels(spec, op_def)
    return sorted({t.short_name for types in levels.values() for t in types if not _held(t)})


def _held(t: DataType) -> bool:
    name = "string" if t == DataType.DT_STRING else _np_name(t)
    return name != "invalid" and backend_holds("array_api_strict", name)  # quantized types have no NumPy dtype


def _np_name(t: DataType) -> str:
    import numpy as np

    try:
        return np.dtype(t.numpy_dtype).name
    except KeyError:
        return "invalid"


def tf_gradient(op: str) -> str:
    sources = [name for name, key in (("C++", "cc"), ("Python", "python")) if op in tf_registry.gradient_ops(key)]
    if sources:
        return ", ".join(sources)
    if op in tf_registry.no_gradient_ops("cc") | tf_registry.no_gradient_ops("python"):
        return "none"
    return "—"


def our_gradient(op: str, grads: dict[str, bool]) -> str:
    if op in grads:
        return "yes" if grads[op] else "none"
    spec = spec_of(op)
    return f"— ({spec.no_gradient})" if spec is not None and spec.no_gradient else "—"


def live_examples(op: str) -> int:
    from tests.conformance.live import type_combos

    spec = spec_of(op)
    if spec is None or not spec.generate or spec.live <= 0 or not type_combos(spec, "numpy"):
        return 0
    return spec.live


def _link(family: str, anchor: str = "") -> str:
    p = page(family)
    return f"[{family}](ops/{p.name}{anchor})" if p is not None else family


# -- the op index --------------------------------------------------------------------------------------
def op_index() -> str:
    kernels = kernel_ops()
    shapes = registered_shape_ops()
    grads = registered_gradient_ops()
    cpu = tf_registry.cpu_ops()
    golden = cases_by_op()
    by_op_divergences: Counter[str] = Counter(op for d in divergences() for op in d.ops)
    tf_grads = tf_registry.gradient_ops("cc") | tf_registry.gradient_ops("python")
    ours_grads = {op for op, has in grads.items() if has}
    with_kernel_tf_grad = [op for op in kernels if op in tf_grads]
    covered = sum(op in ours_grads or op in grads for op in with_kernel_tf_grad)
    classes = {c.op_name: c for c in cc_classes()}
    total_golden = sum(len(golden.get(op, [])) for op in kernels)
    lines = [
        "# Op index",
        "",
        f"Generated by `tools/gen_op_index.py` from the kernel, shape, gradient and conformance registries and "
        f"TensorFlow {tf_registry.tensorflow_version()}'s kernel and gradient registries "
        f"(`tfops_py/_data/tf_kernels.json.gz`, made by `tools/extract_tf_kernels.py`).",
        "",
        f"- **{sum(op in cpu for op in kernels)} / {len(cpu)}** ops TF runs on CPU have a kernel here "
        f"({len(kernels)} kernels in all; {', '.join(op for op in kernels if op not in cpu) or 'none'} "
        f"{'have' if sum(op not in cpu for op in kernels) != 1 else 'has'} no TF CPU kernel).",
        f"- **{len(ours_grads)} / {len(tf_grads)}** gradient functions here / op types TF differentiates "
        f"(C++ API {len(tf_registry.gradient_ops('cc'))}, Python {len(tf_registry.gradient_ops('python'))}); "
        f"of the {len(with_kernel_tf_grad)} ops with a kernel here that TF differentiates, {covered} are "
        f"registered here (with a gradient or as not differentiable), the rest say why not below.",
        f"- **{total_golden}** golden cases ({len([op for op in kernels if golden.get(op)])} ops), "
        f"**{sum(live_examples(op) for op in kernels)}** live examples per run "
        "(`tests/conformance`; TF 2.21 is the oracle, see [architecture](architecture.md#adding-an-op)).",
        f"- Every op of TF's {len(classes)} C++ classes builds (`ops.X`); running one without a kernel raises "
        "`UnimplementedError` naming it.",
        "",
        "Kernels: *generic* kernels are written once against the array API and serve every backend; *own*: a "
        "backend-specific kernel. *array API lacks*: dtypes TF's CPU kernels take that the array-API standard has "
        "no dtype for (NumPy runs them). Gradient: *yes* a gradient function, *none* registered as not "
        "differentiable, — not registered. Golden: stored cases; live: hypothesis examples per run.",
        "",
        "## Ops with kernels",
        "",
        "| op | C++ class | family | shape fn | numpy | array API | array API lacks | cupy | gradient | TF gradient "
        "| golden | live | divergences |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for op in kernels:
        b = _backends(op)
        cls = classes.get(op)
        name = "" if cls is None else (f"internal::{cls.class_name}" if cls.internal else cls.class_name)
        fam = family_of(op)
        n_div = by_op_divergences.get(op, 0)
        div = "" if not n_div else f"[{n_div}](ops/{fam}.md#divergences-from-tf)" if page(fam) else str(n_div)
        lines.append(f"| {op} | {name} | {_link(fam)} | {'yes' if op in shapes else '—'} | {b['numpy']} | "
                     f"{b['array_api']} | {', '.join(_array_api_missing(op))} | {b['cupy']} | "
                     f"{our_gradient(op, grads)} | {tf_gradient(op)} | {len(golden.get(op, [])) or ''} | "
                     f"{live_examples(op) or ''} | {div} |")
    lines += ["", f"## TF CPU ops without a kernel here ({len(cpu - set(kernels))})", "",
              "Grouped by the family of their C++ class (`other`: no C++ class).", ""]
    groups: dict[str, list[str]] = defaultdict(list)
    for op in sorted(cpu - set(kernels)):
        groups[classes[op].group if op in classes else "other"].append(op)
    for group in sorted(groups):
        lines.append(f"- **{group}** ({len(groups[group])}): {', '.join(groups[group])}")
    return "\n".join(lines) + "\n"


# -- divergences -----------------------------------------------------------------------------------------
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def divergence_table(items: list[Divergence]) -> list[str]:
    lines = ["| op | when | TF 2.21 (CPU, native kernels) | tfops_py |", "|---|---|---|---|"]
    for d in items:
        lines.append(f"| {', '.join(d.ops)} | {_cell(d.when)} | {_cell(d.tf)} | {_cell(d.ours)} |")
    return lines


def family_block(family: str) -> str:
    items = [d for d in divergences() if d.family == family]
    lines = [BEGIN, ""]
    lines += divergence_table(items) if items else ["None declared."]
    return "\n".join(lines + ["", END])


def divergences_block() -> str:
    by_family: dict[str, list[Divergence]] = defaultdict(list)
    for d in divergences():
        by_family[d.family].append(d)
    lines = [BEGIN, "", f"{len(divergences())} divergences, declared next to the kernels (`divergence(...)` in each "
             "family module) and rendered here and on the family pages.", ""]
    for family in sorted(by_family):
        lines += [f"### {family_title(family)}", ""]
        if page(family) is not None:
            lines += [f"Details: {_link(family, '#divergences-from-tf')}.", ""]
        lines += divergence_table(by_family[family]) + [""]
    return "\n".join(lines + [END])


def replace_block(text: str, block: str, where: Path) -> str:
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{where} lacks the {BEGIN} / {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + block + tail


def outputs() -> dict[Path, str]:
    """Every generated file and its expected content."""
    out = {INDEX: op_index(), DIVERGENCES: replace_block(DIVERGENCES.read_text(), divergences_block(), DIVERGENCES)}
    for family in sorted({d.family for d in divergences()} | {s.family for s in specs().values()}):
        p = page(family)
        if p is not None and BEGIN in p.read_text():
            out[p] = replace_block(p.read_text(), family_block(family), p)
    return out


def main() -> None:
    for path, text in outputs().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    os.environ.setdefault("TFOPS_CHECK_KERNELS", "0")
    main()
