"""From declarations to concrete cases: arrays, attrs and how each case's expected value is made.

Three sources, in this order in a family's golden file:

* case builders (``family_cases``): explicit arrays, seeded by their position in the builder;
* per spec, sorted by op: hand cases (``cases=``; a literal without a dtype runs for every allowed dtype
  that holds it exactly), then generated cases: every dtype TF's CPU kernels take for each type attr,
  every shape pattern and attr value, covered pairwise (``pairwise.py``), seeded by the case id;
* graph cases (``graph_cases=``).

A case that falls under a declared divergence takes that divergence's reference (and note), or is
not generated when the divergence has none.
"""
from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.conformance.pairwise import pairwise
from tfops_py.conformance import (ALLOWED, BROADCAST, SAME, Domain, Draw, GraphCase, OneOf, Reference,
                                  ShapeRule, Spec, case_builders, divergences, literal, specs, values)
from tfops_py.conformance.domains import Literal
from tfops_py.conformance.spec import CaseList
from tfops_py.conformance.tf_registry import cpu_accepts, cpu_types
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.op_def import ArgDef, OpDef, get_op_def

RANK_SHAPES: list[tuple[int, ...]] = [(), (5,), (3, 4), (2, 0, 3), (2, 1, 3, 2)]
BROADCAST_SHAPES: list[tuple[tuple[int, ...], ...]] = [
    ((3, 4), (3, 4), (3, 4)), ((2, 1, 3), (4, 1), (1, 3)), ((), (5,), ()), ((0, 3), (1, 3), (3,)),
    ((2, 1, 3, 1), (1, 4, 1, 2), (3, 1, 1))]
MAX_GENERATED = 160  # rows per op: keeps the suite's time linear in the number of ops


class SpecError(ValueError):
    """A declaration the harness cannot turn into cases (named op and reason)."""


@dataclass
class Concrete:
    """One materialised case, before TF has run it."""

    id: str
    op: str
    inputs: list[Any]
    attrs: dict[str, Any]
    compare: str = "ew"
    source: str = "generated"
    note: str | None = None
    reference: Reference | None = None
    seed: int | None = None
    graph: GraphCase | None = None
    input_names: list[str] = field(default_factory=list)


def seed_of(case_id: str) -> int:
    return zlib.crc32(case_id.encode())


def has_numpy(dt: DataType) -> bool:
    try:
        _ = dt.numpy_dtype
    except KeyError:
        return False
    return dt != DataType.DT_INVALID


# TF's Python cannot make tensors of the "fnuz" float8 types (its TensorProto lacks them): no case can use them.
_UNTESTABLE = frozenset({DataType.DT_FLOAT8_E4M3FNUZ, DataType.DT_FLOAT8_E4M3B11FNUZ, DataType.DT_FLOAT8_E5M2FNUZ})
NUMPY_TYPES = [dt for dt in DataType if has_numpy(dt) and dt not in _UNTESTABLE]


# -- the factors of an op's generated cases --------------------------------------------------------------
def domain_of(spec: Spec, name: str) -> Domain:
    return spec.domains.get(name) or values()


def type_levels(spec: Spec, op_def: OpDef) -> dict[str, list[DataType]]:
    """Per type attr: the dtypes cases are generated for."""
    levels: dict[str, list[DataType]] = {}
    for attr in op_def.attrs:
        if attr.type != "type":
            continue
        given = spec.attrs.get(attr.name, ALLOWED)
        if isinstance(given, DataType):
            candidates = [given]
        elif isinstance(given, OneOf):
            candidates = list(given.values)
        else:
            allowed = attr.allowed if attr.allowed is not None else NUMPY_TYPES
            cpu = cpu_types(spec.tf_op or spec.op, attr.name)
            extra = referenced_types(spec.op, attr.name)
            candidates = [t for t in NUMPY_TYPES if t in allowed and (cpu is None or t in cpu or t in extra)]
        users = [a for a in op_def.inputs if a.type_attr == attr.name]
        for arg in users:
            domain = domain_of(spec, arg.name)
            fixed = domain.fixed_dtype()
            candidates = [t for t in candidates if (fixed is None or t == fixed) and domain.accepts(t)]
        levels[attr.name] = [t for t in candidates if has_numpy(t)]
    return levels


def referenced_types(op: str, attr: str) -> frozenset[DataType]:
    """Dtypes of ``attr`` that a divergence of ``op`` with a reference covers (TF has no kernel for them)."""
    found: set[DataType] = set()
    for d in divergences(op):
        if d.reference is not None and d.dtypes is not None and not d.attrs and d.applies is None:
            for key, types in d.dtypes.items():
                if key in (None, attr):
                    found |= types
    return frozenset(found)


def runs(spec: Spec, types: Mapping[str, DataType]) -> bool:
    """Whether a case with these type attrs has an expected value: TF's CPU kernel or a referenced divergence."""
    if cpu_accepts(spec.tf_op or spec.op, dict(types)):
        return True
    return any(d.reference is not None and not d.attrs and d.applies is None and d.concerns(spec.op, types, {})
               for d in divergences(spec.op))


def attr_levels(spec: Spec, op_def: OpDef) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """(attrs covered by generated cases -> values, attrs fixed for every case)."""
    covered: dict[str, list[Any]] = {}
    fixed: dict[str, Any] = {}
    numbers = {a.number_attr for a in op_def.inputs if a.number_attr}
    for attr in op_def.attrs:
        if attr.type == "type":
            continue
        given = spec.attrs.get(attr.name)
        if isinstance(given, OneOf):
            covered[attr.name] = list(given.values)
        elif given is ALLOWED:
            if attr.allowed is None:
                raise SpecError(f"{spec.op}: attr {attr.name} has no allowed values to cover")
            covered[attr.name] = list(attr.allowed)
        elif given is not None:
            fixed[attr.name] = given
        elif attr.name in numbers:
            fixed[attr.name] = max(attr.minimum or 0, 2)
        elif not attr.has_default:
            if attr.allowed is None:
                raise SpecError(f"{spec.op}: required attr {attr.name} needs a value or one_of(...) in its spec")
            covered[attr.name] = list(attr.allowed)
    return covered, fixed


def patterned_inputs(spec: Spec, op_def: OpDef) -> list[str]:
    return [a.name for a in op_def.inputs if domain_of(spec, a.name).patterned]


def shape_patterns(spec: Spec, op_def: OpDef) -> list[dict[str, Any]]:
    """The shape factor: per level, {"shapes": input -> shape, "attrs": attr -> value, "tag": str}."""
    names = patterned_inputs(spec, op_def)
    rule = spec.shapes
    if rule == SAME:
        return [{"shapes": dict.fromkeys(names, s), "attrs": {}, "tag": _tag(s)} for s in RANK_SHAPES]
    if rule == BROADCAST:
        return [pattern(spec, op_def, names, {n: row[min(i, len(row) - 1)] for i, n in enumerate(names)})
                for row in BROADCAST_SHAPES]
    items = rule.patterns() if isinstance(rule, ShapeRule) else rule
    return [pattern(spec, op_def, names, item) for item in items]


def pattern(spec: Spec, op_def: OpDef, names: list[str], item: Any) -> dict[str, Any]:
    """One shape pattern from a dict (input -> shape, attr -> value), a tuple of shapes or one shape."""
    attr_names = {a.name for a in op_def.attrs}
    if isinstance(item, Mapping):
        unknown = set(item) - attr_names - {a.name for a in op_def.inputs}
        if unknown:
            raise SpecError(f"{spec.op}: shape pattern names {sorted(unknown)}, not inputs or attrs")
        missing = [n for n in names if n not in item]
        if missing:
            raise SpecError(f"{spec.op}: shape pattern {item} lacks patterned inputs {missing}")
        shapes = {n: tuple(item[n]) for n in names}
        attrs = {k: v for k, v in item.items() if k in attr_names}
    elif item and isinstance(item[0], (tuple, list)):
        shapes, attrs = {n: tuple(s) for n, s in zip(names, item)}, {}
    else:
        shapes, attrs = dict.fromkeys(names, tuple(item)), {}
    tag = "+".join(_tag(s) for s in shapes.values()) + "".join(f",{k}={v}" for k, v in attrs.items())
    return {"shapes": shapes, "attrs": attrs, "tag": tag}


def _tag(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def _short(v: Any) -> str:
    return v.short_name if isinstance(v, DataType) else str(v)


# -- materialising ---------------------------------------------------------------------------------------
def _order(spec: Spec, op_def: OpDef, given: Mapping[str, Domain]) -> list[ArgDef]:
    """Input args in an order where every domain's dependencies come first."""
    pending = list(op_def.inputs)
    done: set[str] = set()
    ordered: list[ArgDef] = []
    while pending:
        for arg in pending:
            if all(d in done for d in given[arg.name].depends if d in {a.name for a in op_def.inputs}):
                ordered.append(arg)
                done.add(arg.name)
                pending.remove(arg)
                break
        else:
            raise SpecError(f"{spec.op}: input domains depend on each other in a cycle")
    return ordered


def _arg_dtype(arg: ArgDef, types: Mapping[str, DataType], attrs: Mapping[str, Any]) -> Any:
    if arg.type is not None:
        return arg.type
    if arg.type_list_attr:
        return list(attrs[arg.type_list_attr])
    return types[arg.type_attr]  # type: ignore[index]


def draw_inputs(spec: Spec, op_def: OpDef, domains: Mapping[str, Domain], types: Mapping[str, DataType],
                shapes: Mapping[str, tuple[int, ...]], attrs: Mapping[str, Any], seed: int) -> list[Any]:
    """The inputs of one case in OpDef order (a list for a list input), drawn from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    drawn: dict[str, Any] = {}
    for arg in _order(spec, op_def, domains):
        domain = domains[arg.name]
        dtype = _arg_dtype(arg, types, attrs)
        shape = shapes.get(arg.name) if domain.patterned else None
        if arg.number_attr or arg.type_list_attr:
            dts = dtype if isinstance(dtype, list) else [dtype] * int(attrs[arg.number_attr])  # type: ignore[index]
            drawn[arg.name] = [domain.draw(Draw(rng, dt, shape, drawn, attrs)) for dt in dts]
        else:
            drawn[arg.name] = domain.draw(Draw(rng, dtype, shape, drawn, attrs))
    return [drawn[a.name] for a in op_def.inputs]


def visible_attrs(op_def: OpDef, attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The attrs a case records: everything but the attrs inferred from the inputs (T, N, Tidx …)."""
    return {k: v for k, v in attrs.items() if k not in op_def.inferred_attrs}


def divergence_for(op: str, types: Mapping[str, DataType], attrs: Mapping[str, Any],
                    inputs: Mapping[str, Any] | None = None) -> tuple[bool, Any]:
    """(excluded, reference) for a case under a declared divergence (inputs None: not drawn yet)."""
    for d in divergences(op):
        if d.concerns(op, types, attrs, inputs) and (inputs is not None or d.applies is None):
            return d.reference is None, d.reference
    return False, None


def named(op_def: OpDef, inputs: Sequence[Any]) -> dict[str, Any]:
    return {a.name: v for a, v in zip(op_def.inputs, inputs)}


def generated_cases(spec: Spec) -> list[Concrete]:
    """The spec's cases over dtypes x shape patterns x attr values, pairwise."""
    if not spec.generate:
        return []
    op_def = get_op_def(spec.op)
    per_type = type_levels(spec, op_def)
    covered, fixed = attr_levels(spec, op_def)
    patterns = shape_patterns(spec, op_def)
    factors: list[tuple[str, str, list[Any]]] = [("type", a, lv) for a, lv in per_type.items()]
    factors.append(("shape", "", patterns))
    factors += [("attr", a, lv) for a, lv in covered.items()]
    if any(not lv for _, _, lv in factors):
        return []

    def assignment(row: Mapping[int, int]) -> tuple[dict[str, DataType], dict[str, Any]]:
        types = {factors[f][1]: factors[f][2][lv] for f, lv in row.items() if factors[f][0] == "type"}
        attrs = dict(fixed)
        for f, lv in row.items():
            kind, name, levels = factors[f]
            if kind == "attr":
                attrs[name] = levels[lv]
            elif kind == "shape":
                attrs.update(levels[lv]["attrs"])
        return types, attrs

    def valid(row: Mapping[int, int]) -> bool:
        types, attrs = assignment(row)
        complete = len(types) == len(per_type)
        if complete and not runs(spec, types):
            return False
        return not (complete and divergence_for(spec.op, types, attrs)[0])

    out: list[Concrete] = []
    seen: set[str] = set()
    domains = {a.name: domain_of(spec, a.name) for a in op_def.inputs}
    for row in pairwise([len(lv) for _, _, lv in factors], lambda r: valid(r), MAX_GENERATED):
        full = dict(enumerate(row))
        types, attrs = assignment(full)
        pattern = patterns[row[len(per_type)]]
        parts = [_short(types[a]) for a in per_type] + [pattern["tag"]] + \
            [f"{factors[f][1]}={_short(factors[f][2][lv])}" for f, lv in full.items() if factors[f][0] == "attr"]
        case_id = f"{spec.op}/" + "/".join(parts)
        if case_id in seen:
            continue
        seen.add(case_id)
        seed = seed_of(case_id)
        inputs = draw_inputs(spec, op_def, domains, types, pattern["shapes"], attrs, seed)
        excluded, ref = divergence_for(spec.op, types, attrs, named(op_def, inputs))
        if excluded:
            continue
        out.append(Concrete(case_id, spec.op, inputs, visible_attrs(op_def, {**attrs, **types}), spec.compare,
                            "generated", ref.note if ref is not None else None, ref, seed))
    return out


def hand_cases(spec: Spec) -> list[Concrete]:
    """The spec's hand cases, each expanded over the dtypes its literals fit (unless it pins them)."""
    if not spec.cases:  # (a graph-only spec need not fix the op's required attrs)
        return []
    op_def = get_op_def(spec.op)
    input_names = [a.name for a in op_def.inputs]
    attr_names = {a.name for a in op_def.attrs}
    per_type = type_levels(spec, op_def)
    _, fixed = attr_levels(spec, op_def)
    out: list[Concrete] = []
    for k, c in enumerate(spec.cases):
        unknown = set(c.named) - set(input_names) - attr_names
        if unknown:
            raise SpecError(f"{spec.op}: case {c.id or k} names {sorted(unknown)}, not inputs or attrs")
        domains = {n: _as_domain(c.named[n]) if n in c.named else domain_of(spec, n) for n in input_names}
        attrs = {**fixed, **{n: v for n, v in c.named.items() if n in attr_names}}
        free = {}
        for attr, levels in per_type.items():
            if attr in attrs:
                continue
            users = [a for a in op_def.inputs if a.type_attr == attr]
            fits = [t for t in (levels or NUMPY_TYPES) if all(
                (domains[a.name].fixed_dtype() in (None, t)) and domains[a.name].accepts(t) for a in users)]
            pinned = {domains[a.name].fixed_dtype() for a in users} - {None}
            free[attr] = sorted(pinned) if pinned else fits
        names = list(free)
        for combo in itertools.product(*(free[n] for n in names)):
            types = {**{n: attrs[n] for n in per_type if n in attrs}, **dict(zip(names, combo))}
            case_id = c.id or f"{spec.op}/case{k}"
            if any(len(free[n]) > 1 for n in names):
                case_id += "/" + "/".join(_short(t) for t in combo)
            seed = c.seed if c.seed is not None else seed_of(case_id)
            shapes = {n: tuple(s) for n, s in c.shapes.items()}
            missing = [n for n in input_names if domains[n].patterned and n not in shapes]
            if missing:
                raise SpecError(f"{spec.op}: case {case_id} draws {missing} from random domains without shapes=")
            inputs = draw_inputs(spec, op_def, domains, types, shapes, {**attrs, **types}, seed)
            excluded, ref = divergence_for(spec.op, types, attrs, named(op_def, inputs))
            if excluded and c.reference is None:
                continue
            reference = c.reference or ref
            note = c.note or (reference.note if reference is not None else None)
            out.append(Concrete(case_id, spec.op, inputs, visible_attrs(op_def, {**attrs, **types}),
                                c.compare or spec.compare, "hand", note, reference, seed))
    return out


def _as_domain(value: Any) -> Domain:
    return value if isinstance(value, Domain) else literal(value)


def graph_cases(spec: Spec) -> list[Concrete]:
    out = []
    for g in spec.graph_cases:
        seed = g.seed if g.seed is not None else seed_of(g.id)
        rng = np.random.default_rng(seed)
        drawn: dict[str, Any] = {}
        for name, v in g.inputs.items():
            domain = _as_domain(v)
            dtype = g.dtypes.get(name) or domain.fixed_dtype() or _literal_dtype(domain)
            drawn[name] = domain.draw(Draw(rng, dtype, g.shapes.get(name), drawn, {}))
        out.append(Concrete(g.id, spec.op, list(drawn.values()), {}, g.compare, "graph", g.note, None, seed, g,
                            list(drawn)))
    return out


def _literal_dtype(domain: Domain) -> DataType:
    if isinstance(domain, Literal):
        kind = np.asarray(domain.value).dtype
        return {"b": DataType.DT_BOOL, "i": DataType.DT_INT32, "u": DataType.DT_INT32, "f": DataType.DT_FLOAT,
                "c": DataType.DT_COMPLEX64}.get(kind.kind, DataType.DT_STRING)
    raise SpecError(f"graph case input {domain} needs a dtype (dtypes=...)")


def builder_cases(family: str) -> list[Concrete]:
    """The family's case builders' cases, in order (their seeds are their positions)."""
    out: CaseList = CaseList(family)
    for build in case_builders(family):
        build(out)
    cases = []
    for k, item in enumerate(out.items):
        op_def = get_op_def(item["op"])
        case_id = item["id"] or f"{item['op']}/b{k}"
        cases.append(Concrete(case_id, item["op"], item["inputs"], visible_attrs(op_def, item["attrs"]),
                              item["compare"], "builder", item["note"], item["reference"], item["seed"]))
    return cases


def family_specs(family: str) -> list[Spec]:
    return [s for op, s in sorted(specs().items()) if s.family == family]


def family_cases(family: str, ops: set[str] | None = None) -> Iterator[Concrete]:
    """Every case of a family in golden-file order (restricted to ``ops`` when given)."""
    for c in builder_cases(family):
        if ops is None or c.op in ops:
            yield c
    for spec in family_specs(family):
        if ops is None or spec.op in ops:
            yield from hand_cases(spec)
            yield from generated_cases(spec)
            yield from graph_cases(spec)
