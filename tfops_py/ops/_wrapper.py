"""Op classes made from the C++ API facts, by the rules of TF's ``cc_op_gen``.

Each class takes ``(scope, inputs..., required attrs..., attrs=None)`` in TF's
order, has an ``Attrs`` class with chainable CamelCase setters (also callable
statically on the op class: ``ops.MatMul.TransposeB(True)``), accepts optional
attrs as keywords (``epsilon=1e-3``), and exposes the outputs as members.
"""
from __future__ import annotations

import difflib
import inspect
import keyword
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import CcClass, OpDef, arg_ranges, get_op_def
from tfops_py.framework.operation import Input, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.framework.status import Status

# Locals of the generated constructor that C++ also reserves (``AvoidCPPKeywords``); Python adds its keywords.
_PY_RESERVED = set(keyword.kwlist) | {"self", "attrs"}


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'X'?"`` for the closest candidates (difflib), or ``""`` when none is close."""
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def py_name(cpp_name: str) -> str:
    """The Python spelling of a C++ parameter or member name (keywords get a trailing ``_``)."""
    return cpp_name + "_" if cpp_name in _PY_RESERVED else cpp_name


class AttrsBase:
    """Optional attrs of one op; setters return modified copies (C++ ``TF_MUST_USE_RESULT``)."""

    __slots__ = ("_values",)
    _fields: dict[str, str] = {}  # C++ field name -> attr name
    _defaults: dict[str, Any] = {}
    _setters: tuple[str, ...] = ()  # the CamelCase setter names

    def __init__(self, **values: Any):
        object.__setattr__(self, "_values", {})
        for k, v in values.items():
            self._set(k, v)

    def _set(self, field: str, value: Any) -> None:
        if field not in self._fields:
            raise TypeError(f"{type(self).__qualname__} has no attr {field!r}{did_you_mean(field, self._fields)}")
        self._values[self._fields[field]] = value

    def _with(self, field: str, value: Any) -> AttrsBase:
        new = type(self)()
        new._values.update(self._values)
        new._set(field, value)
        return new

    def __getattr__(self, name: str) -> Any:
        # C++ fields: ``attrs.epsilon_``
        if name.endswith("_") and name[:-1] in type(self)._fields:
            attr = type(self)._fields[name[:-1]]
            return self._values.get(attr, type(self)._defaults[attr])
        raise AttributeError(f"{type(self).__qualname__} has no setter {name!r}{did_you_mean(name, self._setters)}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name.endswith("_") and name[:-1] in type(self)._fields:
            self._set(name[:-1], value)
        else:
            raise AttributeError(f"{type(self).__qualname__} has no field {name!r}")

    def values(self) -> dict[str, Any]:
        """The attrs set so far, by OpDef attr name."""
        return dict(self._values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{type(self).__qualname__}({inner})"


def _make_setter(field: str):
    def setter(self: AttrsBase, x: Any) -> AttrsBase:
        return self._with(field, x)

    return setter


def _make_static(attrs_cls: type, setter: str):
    def static(x: Any) -> AttrsBase:
        return getattr(attrs_cls(), setter)(x)

    return staticmethod(static)


def as_node_out(scope: Scope, value: Any) -> Output | None:
    """``AsNodeOut``: an Output for an input-like value; literals become ``Const/Const`` nodes."""
    from tfops_py.ops.const import Const

    inp = value if isinstance(value, Input) else Input(value)
    if inp.status_error is not None:
        scope.UpdateStatus(Status(inp.status_error))  # type: ignore[arg-type]
        return None
    if inp.output is not None:
        if inp.output.node() is None:
            scope.UpdateStatus(Status(InvalidArgumentError("input is a null Output (built on a scope in error)")))
            return None
        return inp.output
    out = Const(scope.NewSubScope("Const"), inp.tensor)
    return None if out.node() is None else out


def as_node_out_list(scope: Scope, value: Any) -> list[Output] | None:
    if hasattr(value, "_single_list_output"):
        value = value._single_list_output()
    if isinstance(value, (Output, Input)) or not isinstance(value, (list, tuple)):
        raise TypeError(f"expected a list of inputs (InputList), got {type(value).__name__}")
    outs = []
    for v in value:
        o = as_node_out(scope, v)
        if o is None:
            return None
        outs.append(o)
    return outs


class OpBase:
    """Base of every generated op class."""

    _cc: CcClass
    _op_def: OpDef
    _py_params: list[str]
    Attrs: type[AttrsBase]
    operation: Operation

    def _construct(self, scope: Scope, args: tuple, kwargs: dict[str, Any]) -> None:
        cc = self._cc
        params = self._py_params
        if not isinstance(scope, Scope):
            raise TypeError(f"{cc.class_name}(): the first argument must be a Scope "
                            f"(ops.{cc.class_name}(scope, {', '.join(params) or '...'})), got {type(scope).__name__}")
        if len(args) > len(params) + 1:
            raise TypeError(f"{cc.class_name}() takes at most {len(params) + 1} positional arguments "
                            f"after scope ({len(args)} given)")
        bound: dict[str, Any] = {}
        attrs_obj = None
        for i, v in enumerate(args):
            if i < len(params):
                bound[params[i]] = v
            else:
                attrs_obj = v
        if "attrs" in kwargs:
            attrs_obj = kwargs.pop("attrs")
        attr_overrides: dict[str, Any] = {}
        for k, v in kwargs.items():
            if k in params:
                if k in bound:
                    raise TypeError(f"{cc.class_name}() got multiple values for argument {k!r}")
                bound[k] = v
            elif k in self.Attrs._fields:
                attr_overrides[self.Attrs._fields[k]] = v
            else:
                known = [*params, *self.Attrs._fields]
                raise TypeError(f"{cc.class_name}() got an unexpected keyword argument {k!r}{did_you_mean(k, known)}")
        missing = [p for p in params if p not in bound]
        if missing:
            raise TypeError(f"{cc.class_name}() missing required argument(s): {', '.join(missing)}")
        if attrs_obj is not None and not isinstance(attrs_obj, self.Attrs):
            raise TypeError(f"attrs must be {cc.class_name}.Attrs, got {type(attrs_obj).__name__}")

        self.operation = Operation()
        self._set_outputs(None)
        if not scope.ok() and not scope.raises_errors:
            return
        by_target: dict[str, Any] = {}
        attr_values: dict[str, Any] = {}
        for p, py in zip(cc.params, params):
            v = bound[py]
            if p.kind == "input":
                out = as_node_out(scope, v)
                if out is None:
                    return
                by_target[p.target] = out
            elif p.kind == "input_list":
                outs = as_node_out_list(scope, v)
                if outs is None:
                    return
                by_target[p.target] = outs
            else:
                attr_values[p.target] = v
        if attrs_obj is not None:
            attr_values.update(attrs_obj.values())
        attr_values.update(attr_overrides)
        inputs = [by_target[a.name] for a in self._op_def.inputs]
        node = add_node(scope, self._op_def, inputs, attr_values, default_name=cc.class_name)
        if node is None:
            return
        self.operation = Operation(node)
        self._set_outputs(node)

    def _set_outputs(self, node: Any) -> None:
        ranges = arg_ranges(self._op_def.outputs, node.attrs) if node is not None else None
        for i, out in enumerate(self._cc.outputs):
            member = py_name(out.member)
            if ranges is None:
                value: Any = [] if out.is_list else Output()
            else:
                start, stop = ranges[i]
                value = [Output(node, j) for j in range(start, stop)] if out.is_list else Output(node, start)
            object.__setattr__(self, member, value)

    if not TYPE_CHECKING:  # at run time only: type checkers must still flag unknown members
        def __getattr__(self, name: str) -> Any:
            # Only called for missing attributes: a misspelled output member.
            if name.startswith("__"):
                raise AttributeError(name)
            members = [py_name(o.member) for o in type(self)._cc.outputs]
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}"
                                 f"{did_you_mean(name, [*members, 'operation'])}")

    def __repr__(self) -> str:
        node = self.operation.node()
        return f"<ops.{self._cc.class_name} {node.name if node else '(null)'}>"


class _OpClassMeta(type):
    """The type of op classes: a misspelled static setter (``ops.MatMul.TransposeBB``) gets a suggestion."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") or "Attrs" not in cls.__dict__:
            raise AttributeError(name)
        setters = cls.__dict__["Attrs"]._setters
        members = [py_name(o.member) for o in cls.__dict__["_cc"].outputs]
        raise AttributeError(f"op class {cls.__name__} has no attribute {name!r}"
                             f"{did_you_mean(name, [*setters, *members, 'Attrs'])}")


class _SingleOutput:
    """Mixin for ops with exactly one non-list output: usable directly as an Input."""

    _output_member: str

    def __tfops_output__(self) -> Output:
        return getattr(self, self._output_member)

    def node(self):
        return self.__tfops_output__().node()


class _SingleListOutput:
    _output_member: str

    def __getitem__(self, index: int) -> Output:
        return getattr(self, self._output_member)[index]

    def _single_list_output(self) -> list[Output]:
        return getattr(self, self._output_member)


def make_op_class(cc: CcClass) -> type:
    """The Python class for one C++ op class."""
    op_def = get_op_def(cc.op_name)
    fields = {s.field: s.attr for s in cc.setters}
    attr_defs = op_def.attr_map
    attrs_ns: dict[str, Any] = {
        "__slots__": (),
        "_fields": fields,
        "_defaults": {s.attr: attr_defs[s.attr].default for s in cc.setters},
        "_setters": tuple(s.setter for s in cc.setters),
        "__qualname__": f"{cc.class_name}.Attrs",
        "__module__": "tfops_py.ops",
    }
    for s in cc.setters:
        attrs_ns[s.setter] = _make_setter(s.field)
        attrs_ns[s.setter].__name__ = s.setter
        attrs_ns[s.setter].__qualname__ = f"{cc.class_name}.Attrs.{s.setter}"
    attrs_cls = type("Attrs", (AttrsBase,), attrs_ns)

    py_params = [py_name(p.name) for p in cc.params]
    bases: tuple[type, ...] = (OpBase,)
    ns: dict[str, Any] = {
        "_cc": cc,
        "_op_def": op_def,
        "_py_params": py_params,
        "Attrs": attrs_cls,
        "__module__": "tfops_py.ops",
        "__qualname__": cc.class_name,
        "__doc__": _docstring(cc, op_def),
    }
    if len(cc.outputs) == 1:
        ns["_output_member"] = py_name(cc.outputs[0].member)
        bases = ((_SingleListOutput if cc.outputs[0].is_list else _SingleOutput), OpBase)
    for s in cc.setters:
        ns[s.setter] = _make_static(attrs_cls, s.setter)

    def __init__(self, scope: Scope, *args: Any, **kwargs: Any) -> None:
        self._construct(scope, args, kwargs)

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
              inspect.Parameter("scope", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in py_params]
    if cc.setters:
        params.append(inspect.Parameter("attrs", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None))
        params += [inspect.Parameter(s.field, inspect.Parameter.KEYWORD_ONLY, default=attr_defs[s.attr].default)
                   for s in cc.setters if s.field not in py_params]
    __init__.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{cc.class_name}.__init__"
    ns["__init__"] = __init__
    return _OpClassMeta(cc.class_name, bases, ns)


def _docstring(cc: CcClass, op_def: OpDef) -> str:
    where = "ops::internal::" if cc.internal else "ops::"
    args = ", ".join(["scope"] + [p.name for p in cc.params] + (["attrs"] if cc.setters else []))
    lines = [f"Builds a ``{op_def.name}`` node; mirrors ``tensorflow::{where}{cc.class_name}``.", "",
             f"``{cc.class_name}({args})``"]
    if cc.setters:
        lines += ["", "Attrs: " + ", ".join(f"{s.setter} ({s.attr}, default {s.cpp_default})" for s in cc.setters)]
    lines += ["", "Outputs: " + (", ".join(o.member + ("[]" if o.is_list else "") for o in cc.outputs) or "none")]
    return "\n".join(lines)
