"""The contract between one of our runs and TF's: same build-time verdict, same static shapes, same
values or the same error.

TF runs a case twice: graph construction (its shape function, with Const or unknown-shape Placeholder
inputs: ``graph``) and eager ``tf.raw_ops`` on the native CPU kernels (``eager``).  Ours must reject at
build time exactly where TF's graph construction does, with the same error class and the message of
TF's shape function or of its kernel (tfops_py often runs the kernel's check at build time, with its
more specific text); otherwise it must build, infer TF's static shapes, and produce TF eager's values
(compared as the case says) or raise its error class and message.

Messages are compared after normalisation (:func:`core_message`): TF decorates a kernel's text with
the node (graph mode: ``... for '{{node X}} = X[T=DT_FLOAT](a, b)' with input shapes: [2], [3].``;
eager: ``{{function_node __wrapped__X_device_/job:...}} ... [Op:X] name: ``) and ours names the op and
node around ``OpError.message``; only the text in between is compared (attr validation errors also lose
the ``\n\t; NodeDef: ...; Op<...>`` TF appends).  Known wording differences are accepted: those listed in
:data:`SAME_MEANING`, and a tensor TF prints as ``Tensor<type: float shape: [4,4,1] values: ...>`` where
ours prints ``shape [4,4,1]``.  A family that appends the offending
values to TF's text declares ``conformance(..., messages="prefix")``: TF's whole text (less its final
period) must then start ours.
"""
from __future__ import annotations

import re

import numpy as np

from tests.conformance.golden import Outcome
from tests.conformance.decompositions import JOINT_KINDS, assert_joint
from tests.conformance.tolerances import assert_values

# (ours, TF's) message patterns that say the same thing in different words.
SAME_MEANING = [
    # build-time broadcasting: kernels/_common.py's broadcast helper words it like TF's kernels
    (re.compile(r"^Incompatible shapes:"), re.compile(r"^Dimensions must be equal")),
]


def core_message(text: str) -> str:
    """TF's message without the node or function decorations it adds around the kernel's text."""
    if text.startswith("Graph execution error:"):  # a TF1 session (graph cases): the text after "Node: 'x'"
        text = text.split("\nNode: '", 1)[-1].split("\n", 1)[-1].split("\n\t [[")[0]
    elif "Detected at node" in text:  # another TF1 traceback: the kernel's line, then [[{{node X}}]]
        lines = [line.strip() for line in text.splitlines()]
        end = next((i for i, line in enumerate(lines) if line.startswith("[[")), len(lines))
        text = next(line for line in reversed(lines[:end]) if line)
    text = text.split("\n\t; NodeDef: ")[0]  # attr validation: TF appends the NodeDef and the OpDef
    text = text.split("\n\t [[")[0]  # a TF1 session's node annotation
    text = text.split(" for '{{node")[0]
    if "}} " in text:
        text = text.split("}} ", 1)[1]
    return text.split(" [Op:")[0].strip()


_TENSOR_SUMMARY = re.compile(r"Tensor<type: \w+ shape: (\[[^\]]*\]) values: .*>$")


def same_message(ours: str, theirs: str, prefix: bool = False) -> bool:
    """Whether two core messages say the same; ``prefix``: ours may add detail after TF's whole text (its
    final period dropped), e.g. the offending values."""
    # Eager TF names a Select node "Select"; the C++ class (and so our default node name) is Where3.  Both
    # texts lose surrounding whitespace (core_message strips TF's; MergeSummary's and Assert's end with a space).
    ours = ours.strip().replace("Inputs to operation Where3 of type", "Inputs to operation Select of type")
    # EnsureShape names its input's node; eager TF's input is named after the argument.
    ours = re.sub(r"^Shape of tensor \S+ ", "Shape of tensor input ", ours)
    # TF prints a tensor's summary (Tensor<type: float shape: [4,4,1] values: [[0][1][2]]...>); ours prints
    # the same summary where it can (empty tensors) and its shape otherwise.
    if ours == theirs.strip():
        return True
    theirs = _TENSOR_SUMMARY.sub(r"shape \1", theirs)
    if ours == theirs or (prefix and theirs and ours.startswith(theirs.rstrip("."))):
        return True
    return any(a.search(ours) and b.search(theirs) for a, b in SAME_MEANING)


def _norm_shape(s: list[int | None] | None) -> list[int] | None:
    return None if s is None else [-1 if d is None else int(d) for d in s]


def refines(ours: list[int] | None, theirs: list[int] | None) -> bool:
    """Whether our static shape says everything TF's does (and maybe more): same rank and dims where
    TF knows them."""
    if theirs is None:
        return True
    return ours is not None and len(ours) == len(theirs) and all(t in (-1, o) for o, t in zip(ours, theirs))


def compatible(ours: list[int] | None, theirs: list[int] | None) -> bool:
    """Whether two static shapes can describe the same tensor."""
    if ours is None or theirs is None:
        return True
    return len(ours) == len(theirs) and all(-1 in (o, t) or o == t for o, t in zip(ours, theirs))


SHAPE_RULES = {"exact": lambda a, b: a == b, "refined": refines, "compatible": compatible,
               "unchecked": lambda a, b: True}


def assert_outcome(ours: Outcome, graph: Outcome | None, eager: Outcome, compare: str = "ew",
                   messages: bool | str = True, what: str = "", static_shapes: str = "refined",
                   early_errors: bool = True) -> None:
    """``ours`` keeps the contract with TF's ``graph`` (None: not recorded) and ``eager`` outcomes.

    Our static shapes must refine TF's (``static_shapes``: or equal them, ``exact``, or only be
    ``compatible`` with them); the kernel check (TFOPS_CHECK_KERNELS) holds them against what the
    kernel produced.  ``early_errors``: ours may reject at build time what TF's kernel rejects at run
    time (tfops_py raises as early as it can), with TF eager's class and message.  ``messages``: True
    (equal), ``"prefix"`` (ours may append detail to TF's text) or False (classes only).
    """
    prefix = messages == "prefix"
    if graph is not None and graph.error:
        assert ours.error and ours.at_build, \
            f"{what}: TF rejects at build ({graph.error}: {graph.message}); ours {ours}"
        assert ours.error == graph.error, f"{what}: {ours.error} at build, TF {graph.error}: {graph.message}"
        if messages:  # TF's shape-function text, or its kernel's (tfops_py raises the kernel's check early)
            assert same_message(ours.message, graph.message, prefix) or (
                eager.error and same_message(ours.message, eager.message, prefix)), \
                f"{what}: {ours.message!r} != TF's {graph.message!r}" + \
                (f" or {eager.message!r}" if eager.error else "")
        return
    if ours.at_build and not (early_errors and eager.error):
        raise AssertionError(f"{what}: ours rejects at build ({ours.error}: {ours.message}); TF builds, eager {eager}")
    if graph is not None and graph.shapes is not None and not ours.at_build:
        got, want = [_norm_shape(s) for s in ours.shapes or []], [_norm_shape(s) for s in graph.shapes]
        rule = SHAPE_RULES[static_shapes]
        ok = len(got) == len(want) and all(map(rule, got, want))
        assert ok, f"{what}: inferred shapes {got} are not {static_shapes} to TF's {want}"
    if eager.error:
        assert ours.error == eager.error, f"{what}: TF {eager.error}: {eager.message}; ours {ours}"
        if messages:
            assert same_message(ours.message, eager.message, prefix), \
                f"{what}: {ours.message!r} != TF's {eager.message!r}"
        return
    assert ours.error is None, f"{what}: ours {ours.error}: {ours.message}; TF gives values"
    assert ours.values is not None and eager.values is not None
    assert len(ours.values) == len(eager.values), f"{what}: {len(ours.values)} outputs, TF {len(eager.values)}"
    if compare in JOINT_KINDS:  # factorizations: the outputs are compared together
        assert_joint(compare, [np.asarray(v) for v in ours.values], [np.asarray(v) for v in eager.values], what)
        return
    for i, (a, b) in enumerate(zip(ours.values, eager.values)):
        assert_values(np.asarray(a), np.asarray(b), compare, f"{what} output {i}")
