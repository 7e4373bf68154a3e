"""Regenerate golden files from the conformance declarations, with TensorFlow's native CPU kernels.

    python tools/conformance/gen_golden.py                  # every family
    python tools/conformance/gen_golden.py --family math_ops
    python tools/conformance/gen_golden.py --op Softplus    # only these ops' cases; the rest of the file is kept

Each case is run on TF three ways: graph construction with Const inputs and with unknown-shape
Placeholders (TF's shape-function verdict and static shapes), and eagerly (values or the kernel's
error).  Cases whose expected value comes from a reference (no TF kernel, a divergence) store that
value with a note.  Generated cases TF has no kernel for are dropped (and listed).  Deterministic: the
same declarations and TF give the same file.  Writes ``tests/conformance/golden/<family>.npz``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import tfops_py  # noqa: E402,F401  (registers every declaration)
from tests.conformance import golden, oracle  # noqa: E402
from tests.conformance.cases import Concrete, family_cases, family_specs  # noqa: E402
from tests.conformance.golden import GoldenWriter, Outcome, encode_attrs  # noqa: E402
from tfops_py.conformance import case_builders, families, spec_of  # noqa: E402

MAX_FILE_BYTES = 4_000_000


def _outcome(o: Outcome, writer: GoldenWriter, mode: str) -> dict:
    if o.error:
        return {"error": [o.error, o.message]}
    if mode == "eager":
        return {"outputs": [writer.array(v) for v in o.values or []]}
    return {"shapes": o.shapes}


_GRAPH_OUTCOMES: dict[tuple, Outcome] = {}


def _graph_outcome(c: Concrete) -> Outcome:
    """TF's outcome of a graph case, run once when several ops share the case (the same program)."""
    key = (id(c.graph.tf), tuple(writer_key(v) for v in c.inputs))  # type: ignore[union-attr]
    if key not in _GRAPH_OUTCOMES:
        _GRAPH_OUTCOMES[key] = oracle.tf_graph_case(c.graph.tf, c.inputs)  # type: ignore[union-attr]
    return _GRAPH_OUTCOMES[key]


def writer_key(value: object) -> tuple:
    import numpy as np

    arr = np.asarray(value)
    return (str(arr.dtype), arr.shape, arr.tobytes() if arr.dtype != object else repr(arr.tolist()))


def record(c: Concrete, writer: GoldenWriter) -> dict | None:
    """The stored form of one case, or None when TF has no kernel for it (and no reference)."""
    entry: dict = {"id": c.id, "op": c.op, "source": c.source, "compare": c.compare}
    if c.seed is not None:
        entry["seed"] = c.seed
    if c.graph is not None:
        eager = _graph_outcome(c) if c.graph.tf is not None else None
        if eager is None:
            raise SystemExit(f"graph case {c.id} has no TF builder")
        entry.update(attrs={}, inputs=[writer.arrays(v) for v in c.inputs], inputs_named=c.input_names,
                     eager=_outcome(eager, writer, "eager"))
    else:
        if c.reference is not None:
            eager = oracle.reference_outcome(c.reference, c.op, c.inputs, c.attrs)
        else:
            eager = oracle.tf_eager(c.op, c.inputs, c.attrs)
            if oracle.no_kernel(eager):
                return None
        graph = {m: _outcome(oracle.tf_graph(c.op, c.inputs, c.attrs, m), writer, m) for m in ("const", "feed")}
        entry.update(attrs=encode_attrs(c.op, c.attrs, writer), inputs=[writer.arrays(v) for v in c.inputs],
                     eager=_outcome(eager, writer, "eager"), graph=graph)
    if c.note:
        entry["note"] = c.note
    return entry


def _copy(case: golden.GoldenCase, writer: GoldenWriter) -> dict:
    """An unchanged case of the old file, its arrays re-stored in the new one."""
    raw = dict(case.raw)
    raw["inputs"] = [writer.arrays(v) for v in case.inputs]
    if "outputs" in raw["eager"]:
        raw["eager"] = {"outputs": [writer.array(v) for v in case.eager.values or []]}
    raw["attrs"] = encode_attrs(case.op, case.attrs, writer)
    return raw


def generate(family: str, ops: set[str] | None) -> None:
    import tensorflow as tf

    start = time.time()
    old = golden.load(family) if ops else None
    kept = {c.id: c for c in old.cases} if old is not None else {}
    writer = GoldenWriter(family)
    dropped = []
    done: set[str] = set()
    order = list(family_cases(family))  # every id, in file order (no TF work yet)
    for c in order:
        if ops is not None and c.op not in ops:
            if c.id in kept:
                writer.add(_copy(kept[c.id], writer))
            continue
        if c.id in done:
            raise SystemExit(f"{family}: case id {c.id} appears twice")
        done.add(c.id)
        entry = record(c, writer)
        if entry is None:
            dropped.append(c.id)
        else:
            writer.add(entry)
    out = writer.save(tf.__version__)
    size = out.stat().st_size
    print(f"{family}: {len(writer.cases)} cases -> {out.relative_to(ROOT)} ({size} bytes, {time.time() - start:.0f} s)"
          + (f"; no TF kernel, dropped: {', '.join(dropped)}" if dropped else ""), file=sys.stderr)
    if size > MAX_FILE_BYTES:
        raise SystemExit(f"{out} is {size} bytes: keep golden files under {MAX_FILE_BYTES}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", action="append", help="regenerate this family (repeatable)")
    parser.add_argument("--op", action="append", help="regenerate only this op's cases (repeatable)")
    args = parser.parse_args()
    ops = set(args.op) if args.op else None
    if ops:
        unknown = sorted(op for op in ops if spec_of(op) is None and not any(
            c.op == op for f in families() for c in family_cases(f) if case_builders(f)))
        if unknown:
            raise SystemExit(f"no conformance declaration for {unknown}")
    wanted = args.family or sorted({s.family for f in families() for s in family_specs(f)} |
                                   {f for f in families() if case_builders(f)})
    if ops:
        wanted = [f for f in wanted if any(c.op in ops for c in family_cases(f))]
    for family in wanted:
        generate(family, ops)
    return 0


if __name__ == "__main__":
    sys.exit(main())
