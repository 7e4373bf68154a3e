"""One class per TensorFlow C++ op class, made on first access from the op definitions.

``ops.FusedBatchNormGrad``, ``ops.MatMul``, aliases such as ``ops.ReduceSum``; the
classes TF keeps in ``ops::internal`` are under ``ops.internal`` and also here.
``ops.Const`` is hand-written.  Type stubs for every class are in ``__init__.pyi``.
"""
from __future__ import annotations

# Imports are underscored: this namespace holds op classes, and TF has ops named ``Any``, ``Const`` ...
import functools as _functools
import types as _types
from typing import Any as _Any

from tfops_py.framework.op_def import CcClass as _CcClass
from tfops_py.framework.op_def import cc_classes as _cc_classes
from tfops_py.ops._wrapper import did_you_mean as _did_you_mean
from tfops_py.ops._wrapper import make_op_class as _make_op_class
from tfops_py.ops.const import Const
from tfops_py.ops.while_loop import BodyGraphBuilderFn, BuildWhileLoop, CondGraphBuilderFn


@_functools.cache
def _index() -> tuple[dict[str, _CcClass], dict[str, _CcClass]]:
    """(public name -> class facts, internal name -> class facts); aliases included."""
    public: dict[str, _CcClass] = {}
    internal: dict[str, _CcClass] = {}
    for cc in _cc_classes():
        table = internal if cc.internal else public
        for name in (cc.class_name, *cc.aliases):
            table[name] = cc
    return public, internal


@_functools.cache
def _class_for(cc: _CcClass) -> type:
    return _make_op_class(cc)


def _lookup(name: str, tables: tuple[dict[str, _CcClass], ...]) -> type:
    for table in tables:
        cc = table.get(name)
        if cc is not None:
            return _class_for(cc)
    names = [n for table in tables for n in table]
    raise AttributeError(f"tfops_py.ops has no op class {name!r}{_did_you_mean(name, names)}")


def __getattr__(name: str) -> _Any:
    if name.startswith("__"):
        raise AttributeError(name)
    cls = _lookup(name, _index())
    globals()[name] = cls
    return cls


def __dir__() -> list[str]:
    public, internal = _index()
    return sorted(set(globals()) | set(public) | set(internal))


class _InternalNamespace(_types.ModuleType):
    """``ops.internal``: the classes of TF's ``ops::internal`` namespace."""

    def __getattr__(self, name: str) -> _Any:
        if name.startswith("__"):
            raise AttributeError(name)
        cls = _lookup(name, (_index()[1],))
        setattr(self, name, cls)
        return cls

    def __dir__(self) -> list[str]:
        return sorted(_index()[1])


internal = _InternalNamespace("tfops_py.ops.internal")


def class_names(include_internal: bool = True) -> list[str]:
    """Every op class name (aliases included)."""
    public, hidden = _index()
    return sorted(set(public) | (set(hidden) if include_internal else set()))


__all__ = ["BodyGraphBuilderFn", "BuildWhileLoop", "CondGraphBuilderFn", "Const", "internal", "class_names"]
