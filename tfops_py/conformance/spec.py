"""The conformance registry: per op, how it is checked against TensorFlow; per family, where it departs.

Declarations are lightweight records made at import (no arrays); ``tests/conformance`` turns them into
cases.  A declaration's *family* is the golden file and docs page it belongs to: the declaring
module's ``CONFORMANCE_FAMILY`` if it sets one, else the module's name (``math_ops``, ``batch_norm``).
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from tfops_py.conformance.domains import Domain
from tfops_py.conformance.references import Reference
from tfops_py.framework.dtypes import DataType

class _Record:
    """A plain record set once by keyword (much cheaper to define at import than a dataclass)."""

    __slots__: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)}")
        for name in self.__slots__:
            setattr(self, name, values[name] if name in values else self._defaults[name])

    def __repr__(self) -> str:
        first = self.__slots__[0]
        return f"{type(self).__name__}({first}={getattr(self, first)!r})"


def resolve(target: Any) -> Any:
    """A callable, or one named ``"package.module:attr"`` (imported on first use, not at declaration)."""
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


SAME = "same"  # every patterned input has the case's shape (ranks 0..4, empty dims included)
BROADCAST = "broadcast"  # patterned inputs have mutually broadcastable shapes
COMPARE_KINDS = ("exact", "ew", "cw", "ew1", "acc", "bn", "exp", "avg", "lin", "svd", "qr", "eigh", "eigh_rows",
                 "eig")


class OneOf:
    """The values an attr takes across generated cases (covered pairwise with dtypes and shapes)."""

    __slots__ = ("values",)

    def __init__(self, values: Sequence[Any]):
        if not values:
            raise ValueError("one_of needs at least one value")
        self.values = tuple(values)

    def __repr__(self) -> str:
        return f"one_of{self.values!r}"


def one_of(*values: Any) -> OneOf:
    return OneOf(values)


BOOL = OneOf((False, True))


class _Allowed:
    """Every value the OpDef allows for the attr (a string enum such as ``padding``, or a type attr)."""

    def __repr__(self) -> str:
        return "ALLOWED"


ALLOWED = _Allowed()


class ShapeRule:
    """Shapes of an op whose inputs are related (a product's inner dimensions …): ``patterns()`` gives the
    golden cases' patterns, ``sample(rng)`` a live case's (by default one of the patterns).  A pattern
    maps input names to shapes and may fix attrs (``{"a": (3, 4), "b": (5, 4), "transpose_b": True}``)."""

    def patterns(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        found = self.patterns()
        return found[int(rng.integers(len(found)))]


class Case(_Record):
    """A hand-written case: ``named`` maps input names to domains or literals and attr names to values.

    An input given as a literal without a dtype runs for every allowed dtype that holds its values
    exactly (``[nan, inf, 0.5]`` runs for each floating type).  ``shapes`` gives the shape of inputs
    drawn from random domains.
    """

    __slots__ = ("named", "id", "note", "compare", "reference", "seed", "shapes")
    _defaults = {"id": None, "note": None, "compare": None, "reference": None, "seed": None}


def case(named: Mapping[str, Any] | None = None, /, *, id: str | None = None, note: str | None = None,
         compare: str | None = None, reference: Reference | None = None, seed: int | None = None,
         shapes: Mapping[str, tuple[int, ...]] | None = None, **inputs_and_attrs: Any) -> Case:
    """A hand case; pass ``named`` as a dict when an input or attr is called like a keyword here."""
    return Case(named={**(named or {}), **inputs_and_attrs}, id=id, note=note, compare=compare, reference=reference,
                seed=seed, shapes=dict(shapes or {}))


class GraphCase(_Record):
    """A case that is not one op on constants: ``build(scope, *inputs)`` returns the fetches (and
    optionally ``(fetches, targets)`` run first), ``tf(tf, *inputs)`` the same with TF ops in a TF1
    graph.  ``inputs`` maps names to domains or literals (``dtypes``/``shapes`` pin random ones)."""

    __slots__ = ("id", "build", "tf", "inputs", "dtypes", "shapes", "compare", "note", "seed")


def graph_case(id: str, build: Callable[..., Any], tf: Callable[..., Any] | None, *, compare: str = "ew",
               note: str | None = None, seed: int | None = None, dtypes: Mapping[str, DataType] | None = None,
               shapes: Mapping[str, tuple[int, ...]] | None = None, **inputs: Any) -> GraphCase:
    return GraphCase(id=id, build=build, tf=tf, inputs=dict(inputs), dtypes=dict(dtypes or {}),
                     shapes=dict(shapes or {}), compare=compare, note=note, seed=seed)


class Spec(_Record):
    """How one op is checked.  See :func:`conformance`; ``domains`` maps input names to domains, ``attrs``
    attr names to ``OneOf``, ``ALLOWED`` or a fixed value."""

    __slots__ = ("op", "family", "module", "domains", "attrs", "shapes", "cases", "graph_cases", "grad", "compare",
                 "live", "messages", "generate", "tf_op", "static_shapes", "no_gradient", "early_errors")


class Divergence(_Record):
    """Where tfops_py departs from TF 2.21 on purpose.  ``dtypes``/``attrs``/``applies`` say which cases it
    concerns: generated and live cases there take their expected value from ``reference``, or are not
    generated; ``builds``: TF's graph construction refuses them where tfops_py builds; ``static_shapes``
    False: TF's static shapes disagree with its own kernel there (tfops_py follows the kernel)."""

    __slots__ = ("ops", "when", "tf", "ours", "family", "module", "dtypes", "attrs", "reference", "applies", "builds",
                 "static_shapes")

    @property
    def conditional(self) -> bool:
        """Whether it names the cases it concerns (else it only documents)."""
        return self.dtypes is not None or bool(self.attrs) or self.applies is not None

    def concerns(self, op: str, types: Mapping[str, DataType], attrs: Mapping[str, Any],
                 inputs: Mapping[str, Any] | None = None) -> bool:
        """Whether a case of ``op`` falls under this divergence (``inputs`` by name; None: not drawn yet,
        an ``applies`` condition then counts as met)."""
        if op not in self.ops or not self.conditional:
            return False
        if self.dtypes is not None:
            for attr, allowed in self.dtypes.items():
                values = types.values() if attr is None else [types[attr]] if attr in types else []
                if not any(t in allowed for t in values):
                    return False
        if not all(attrs.get(k) in v for k, v in self.attrs.items()):
            return False
        # the predicate sees the type attrs too (a case's free dtypes are in ``types``, not ``attrs``)
        return self.applies is None or inputs is None or bool(resolve(self.applies)(inputs, {**attrs, **types}))


class Formula(_Record):
    """A large input stored as its recipe: ``function(*args)`` (``"package.module:function"``, numbers as
    args) gives the array, so a golden file holds a few numbers instead of megabytes of random values."""

    __slots__ = ("function", "args")

    def value(self) -> np.ndarray:
        return np.asarray(resolve(self.function)(*self.args))


def formula(function: str, *args: Any) -> Formula:
    """An input computed by ``function(*args)`` when a case runs (see :class:`Formula`)."""
    return Formula(function=function, args=tuple(args))


class CaseList:
    """Where a family's case builder puts cases made from explicit arrays (the golden generator's input).

    ``rng()`` is seeded with the number of cases added so far, so a builder's values depend only on
    its own order: adding cases at the end never changes earlier ones.
    """

    def __init__(self, family: str = ""):
        self.family = family
        self.items: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self.items)

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(len(self.items))

    def add(self, op: str, inputs: Sequence[Any], attrs: Mapping[str, Any] | None = None, *, compare: str = "ew",
            note: str | None = None, reference: Reference | None = None, id: str | None = None,
            threads: bool = False, outputs: Sequence[int] | None = None) -> None:
        """One case of ``op``: ``inputs`` in OpDef order (a list for a list input, a :class:`Formula` for a
        large one), ``attrs`` by name.  ``threads``: the result depends on TF's intra-op thread count
        (Eigen's sharded reductions); the count TF ran with is stored and ours run with it.  ``outputs``:
        store and check only these outputs (of a large case whose other outputs smaller cases check)."""
        if compare not in COMPARE_KINDS:
            raise ValueError(f"compare must be one of {COMPARE_KINDS}, not {compare!r}")
        if reference is not None and not (note or reference.note):
            raise ValueError(f"a case of {op} made by a reference needs a note")
        self.items.append({"op": op, "inputs": list(inputs), "attrs": dict(attrs or {}), "compare": compare,
                           "note": note or (reference.note if reference is not None else None),
                           "reference": reference, "id": id, "seed": len(self.items), "threads": threads,
                           "outputs": tuple(outputs) if outputs is not None else None})


    def add_graph(self, op: str, recipe: Callable[..., Any], inputs: Sequence[Any] = (), *, id: str,
                  compare: str = "ew", note: str | None = None) -> None:
        """A graph case of ``op`` (``id`` required): ``recipe(g, *inputs)`` builds it on either side (see
        :mod:`tfops_py.conformance.graphs`); ``inputs`` become constants."""
        from tfops_py.conformance.graphs import on_tf, ours

        self.add_graph_case(op, ours(recipe), on_tf(recipe), inputs, id=id, compare=compare, note=note)

    def add_graph_case(self, op: str, build: Callable[..., Any], tf: Callable[..., Any], inputs: Sequence[Any] = (),
                       *, id: str, compare: str = "ew", note: str | None = None) -> None:
        """A graph case of ``op`` built by a function per side: ``build(scope, *inputs)`` on tfops_py and
        ``tf(tf, *inputs)`` on TF."""
        if compare not in COMPARE_KINDS:
            raise ValueError(f"compare must be one of {COMPARE_KINDS}, not {compare!r}")
        graph = GraphCase(id=id, build=build, tf=tf, inputs={}, dtypes={}, shapes={}, compare=compare, note=note,
                          seed=None)
        self.items.append({"op": op, "inputs": list(inputs), "attrs": {}, "compare": compare, "note": note,
                           "reference": None, "id": id, "seed": len(self.items), "graph": graph})


CaseBuilder = Callable[[CaseList], None]


class _Registry:
    def __init__(self) -> None:
        self.specs: dict[str, Spec] = {}
        self.divergences: list[Divergence] = []
        self.builders: dict[str, list[tuple[str, CaseBuilder]]] = {}
        self.family_modules: dict[str, set[str]] = {}


_REGISTRY = _Registry()


def _caller(depth: int = 2) -> tuple[str, str]:
    """(family, module) of the module calling the public function."""
    module_globals = sys._getframe(depth).f_globals
    module = module_globals.get("__name__", "")
    family = module_globals.get("CONFORMANCE_FAMILY") or module.rsplit(".", 1)[-1]
    _REGISTRY.family_modules.setdefault(family, set()).add(module)
    return family, module


def conformance(op: str, /, *, shapes: Any = SAME, cases: Iterable[Case | Mapping[str, Any]] = (),
                graph_cases: Iterable[GraphCase] = (), grad: Any = False, compare: str = "ew", live: int = 6,
                messages: bool | str = True, generate: bool = True, tf_op: str | None = None,
                static_shapes: str = "refined", no_gradient: str | None = None, early_errors: bool = True,
                input_domains: Mapping[str, Any] | None = None, **inputs_and_attrs: Any) -> Spec:
    """Declare how ``op`` is checked against TF.

    Keyword arguments name the op's inputs (a :class:`Domain`: ``values()``, ``axis_of("x")`` …; an
    input left out draws ``values()``) and attrs (``one_of(...)``/``BOOL``/``ALLOWED`` to cover values,
    anything else to fix one).  Generated cases cover every dtype TF's CPU kernels take for each type
    attr (and those a divergence with a reference covers), the ``shapes`` patterns (``SAME``,
    ``BROADCAST``, a list of ``{input: shape, attr: value}`` dicts, a :class:`ShapeRule`, or
    ``"package.module:NAME"`` of one, imported only when cases are made) and the attr values, pairwise.
    ``cases`` are hand cases, ``graph_cases`` cases built as graphs; ``generate=False`` keeps only those.
    ``compare`` is the value comparison (see tests/conformance/tolerances.py), ``live`` the number of live
    examples per backend, ``messages`` whether error messages must equal TF's (``"prefix"``: TF's text may
    be followed by more detail, such as the offending values), ``grad`` (True or input domains) adds gradient checks,
    ``tf_op`` names the TF op when it differs.  Build-time shapes must refine TF's static shapes
    (``static_shapes="exact"``: equal them; ``"compatible"``: only agree where both know a dim).
    ``early_errors``: where TF's kernel rejects a case at run time, ours may already reject it at build
    time (same class and message); False demands TF's timing too.  ``no_gradient`` says why an op TF
    differentiates has no gradient here yet (the op index lists it).  ``input_domains`` gives the domains of
    inputs whose names are taken by these parameters (the ``grad`` input of a gradient op).
    """
    family, module = _caller()
    inputs_and_attrs = {**(input_domains or {}), **inputs_and_attrs}
    if op in _REGISTRY.specs:
        raise ValueError(f"conformance for {op} declared twice ({_REGISTRY.specs[op].module} and {module})")
    if compare not in COMPARE_KINDS:
        raise ValueError(f"compare must be one of {COMPARE_KINDS}, not {compare!r}")
    if static_shapes not in ("refined", "exact", "compatible"):
        raise ValueError(f"static_shapes must be 'refined', 'exact' or 'compatible', not {static_shapes!r}")
    domains = {k: v for k, v in inputs_and_attrs.items() if isinstance(v, Domain)}
    attrs = {k: v for k, v in inputs_and_attrs.items() if k not in domains}
    hand = tuple(c if isinstance(c, Case) else case(dict(c)) for c in cases)
    spec = Spec(op=op, family=family, module=module, domains=domains, attrs=attrs, shapes=shapes, cases=hand,
                graph_cases=tuple(graph_cases), grad=grad, compare=compare, live=live, messages=messages,
                generate=generate, tf_op=tf_op, static_shapes=static_shapes, no_gradient=no_gradient,
                early_errors=early_errors)
    _REGISTRY.specs[op] = spec
    return spec


def divergence(ops: str | Sequence[str], /, *, when: str, tf: str, ours: str,
               dtypes: Iterable[DataType] | Mapping[str, Iterable[DataType]] | None = None,
               attrs: Mapping[str, Any] | None = None,
               applies: Callable[..., bool] | str | None = None,
               reference: Reference | None = None, builds: bool = False, static_shapes: bool = True) -> Divergence:
    """Record a departure from TF 2.21: ``when`` it happens, what ``tf`` does, what tfops_py does.

    Rendered into docs/divergences.md and the family page.  With ``dtypes`` (any type attr among them,
    or a mapping type attr -> dtypes), ``attrs`` (attr -> value
    or tuple of values) and/or ``applies`` (a predicate on the inputs by name and the attrs, or
    ``"package.module:function"`` of one, imported on first use) the
    conformance cases there use ``reference`` for their expected value, or are left out when there is
    none (a test of the family then covers the divergence).  ``builds``: TF's graph construction
    refuses these cases where tfops_py builds them (its shape function agrees with TF's kernel);
    ``static_shapes=False``: TF's static shapes there disagree with what its kernel returns, and ours
    follow the kernel.
    """
    family, module = _caller()
    names = (ops,) if isinstance(ops, str) else tuple(ops)
    cond = {k: (v if isinstance(v, tuple) else (v,)) for k, v in (attrs or {}).items()}
    if dtypes is None:
        types = None
    elif isinstance(dtypes, Mapping):
        types = {k: frozenset(v) for k, v in dtypes.items()}
    else:
        types = {None: frozenset(dtypes)}
    d = Divergence(ops=names, when=when, tf=tf, ours=ours, family=family, module=module, dtypes=types, attrs=cond,
                   reference=reference, applies=applies, builds=builds, static_shapes=static_shapes)
    _REGISTRY.divergences.append(d)
    return d


def family_cases(builder: CaseBuilder | str) -> CaseBuilder | str:
    """Register ``builder(out: CaseList)``, which adds the calling module's family cases built from arrays;
    a ``"module:function"`` string is imported only when cases are generated (not with tfops_py)."""
    family, module = _caller()
    _REGISTRY.builders.setdefault(family, []).append((module, builder))
    return builder


# -- reading the registry -----------------------------------------------------------------------------
def specs() -> dict[str, Spec]:
    """Every declared op -> its spec."""
    return dict(_REGISTRY.specs)


def spec_of(op: str) -> Spec | None:
    return _REGISTRY.specs.get(op)


def divergences(op: str | None = None) -> list[Divergence]:
    return [d for d in _REGISTRY.divergences if op is None or op in d.ops]


def case_builders(family: str) -> list[CaseBuilder]:
    return [resolve(b) for _, b in _REGISTRY.builders.get(family, [])]


def families() -> list[str]:
    """Every family with a declaration (a spec, a divergence or a case builder)."""
    return sorted(set(_REGISTRY.family_modules))


def family_modules(family: str) -> list[str]:
    return sorted(_REGISTRY.family_modules.get(family, ()))
