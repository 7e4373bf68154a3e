"""The string dtype end to end: the canonical value (object arrays of ``bytes``), the inputs accepted, and the
host rule (string and host-only nodes run on NumPy; numeric values cross to the session's device)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.backends import BACKENDS
from tfops_py import ClientSession, Scope, ops
from tfops_py.client.placement import runs_on_host
from tfops_py.errors import InvalidArgumentError, UnimplementedError
from tfops_py.framework.dtypes import DataType


def _is_device_array(value: object, backend: str) -> bool:
    """A numeric result is an array of the session's namespace, not a host NumPy array (except on NumPy)."""
    return backend == "numpy" or not isinstance(value, np.ndarray)


@pytest.mark.parametrize("fed, expected", [
    ("hé", b"h\xc3\xa9"),
    (b"\xff", b"\xff"),
    (np.str_("z"), b"z"),
    (np.bytes_(b"z"), b"z"),
    (np.array(["a", "bé"]), [b"a", b"b\xc3\xa9"]),
    (np.array([b"a", b"b"]), [b"a", b"b"]),
    (np.array(["a", "bé"], dtype=np.dtypes.StringDType()), [b"a", b"b\xc3\xa9"]),
    (np.array(["a", b"b"], dtype=object), [b"a", b"b"]),
    (["a", "b"], [b"a", b"b"]),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_string_feeds_become_bytes(backend, fed, expected):
    s = Scope.NewRootScope()
    p = ops.Placeholder(s, DataType.DT_STRING)
    out = ClientSession(s, backend=backend).Run({p: fed}, [ops.Identity(s, p)])[0]
    assert isinstance(out, np.ndarray) and out.dtype == object
    assert out.tolist() == expected


def test_non_string_objects_are_refused():
    s = Scope.NewRootScope()
    p = ops.Placeholder(s, DataType.DT_STRING)
    with pytest.raises(InvalidArgumentError, match="cannot convert int element 1 to a string"):
        ClientSession(s).Run({p: np.array([1], dtype=object)}, [ops.Identity(s, p)])


def test_const_from_string_dtype_array():
    s = Scope.NewRootScope()
    c = ops.Const(s, np.array(["x", "é"], dtype=np.dtypes.StringDType()))
    assert c.type() == DataType.DT_STRING
    assert ClientSession(s).Run([c])[0].tolist() == [b"x", "é".encode()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_string_nodes_run_on_host_and_numeric_outputs_reach_the_device(backend):
    s = Scope.NewRootScope()
    words = ops.Const(s, [["a", "bb"], ["a", "c"]])
    flat = ops.Reshape(s, words, [-1])
    same = ops.Equal(s, flat, "a")
    size = ops.Cast(s, ops.Shape(s, flat), DataType.DT_FLOAT)
    grown = ops.Add(s, size, 1.0)
    picked = ops.GatherV2(s, flat, [3, 0], 0)
    joined = ops.Concat(s, [flat, picked], 0)
    got = ClientSession(s, backend=backend).Run([same, grown, joined])
    assert np.asarray(got[0]).tolist() == [True, False, True, False]
    assert np.asarray(got[1]).tolist() == [5.0]
    assert _is_device_array(got[0], backend) and _is_device_array(got[1], backend)
    assert got[2].tolist() == [b"a", b"bb", b"a", b"c", b"c", b"a"]


def test_host_rule():
    s = Scope.NewRootScope()
    strings = ops.Const(s, ["a"])
    assert runs_on_host(strings.node())
    assert runs_on_host(ops.Shape(s, strings).node())  # a string input
    assert not runs_on_host(ops.Shape(s, ops.Const(s, [1.0])).node())


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_string_add_is_a_0d_array(backend):
    s = Scope.NewRootScope()
    out = ClientSession(s, backend=backend).Run([ops.Add(s, ops.Const(s, "x"), ops.Const(s, "y"))])[0]
    assert isinstance(out, np.ndarray) and out.shape == () and out[()] == b"xy"


@pytest.mark.parametrize("backend", BACKENDS)
def test_string_resource_variable(backend):
    s = Scope.NewRootScope()
    value = ops.Const(s, ["p", "q"])
    var = ops.VarHandleOp(s, DataType.DT_STRING, [2])
    assign = ops.AssignVariableOp(s, var, value)
    sess = ClientSession(s, backend=backend)
    sess.Run({}, [], [assign])
    read, zeros = sess.Run([ops.ReadVariableOp(s, var, DataType.DT_STRING), ops.ZerosLike(s, value)])
    assert read.tolist() == [b"p", b"q"] and zeros.tolist() == [b"", b""]


@pytest.mark.parametrize("dst", [DataType.DT_INT32, DataType.DT_FLOAT])
def test_no_string_cast(dst):
    s = Scope.NewRootScope()
    with pytest.raises(UnimplementedError, match=f"Cast string to {dst.short_name} is not supported"):
        ClientSession(s).Run([ops.Cast(s, ops.Const(s, ["1"]), dst)])
