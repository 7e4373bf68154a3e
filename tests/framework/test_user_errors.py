"""What a user sees when they get something wrong: the errors name the problem and suggest the fix."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

from tfops_py import DT_FLOAT, DT_INT32, ClientSession, Scope, errors, ops


@pytest.fixture
def root():
    return Scope.NewRootScope()


def test_forgotten_scope_says_the_first_argument_must_be_a_scope(root):
    x = ops.Placeholder(root, DT_FLOAT)
    with pytest.raises(TypeError, match=r"MatMul\(\): the first argument must be a Scope .*got Placeholder"):
        ops.MatMul(x, x)
    with pytest.raises(TypeError, match=r"Const\(\): the first argument must be a Scope"):
        ops.Const([1.0], 2.0)


@pytest.mark.parametrize("mistake, message", [
    (lambda x, root: ops.MatMull, r"no op class 'MatMull'; did you mean 'MatMul'"),
    (lambda x, root: ops.internal.AvgPoolGrd, r"did you mean 'AvgPoolGrad'"),
    (lambda x, root: ops.matmul, r"did you mean 'MatMul'"),
    (lambda x, root: ops.MatMul.TransposeBB(True), r"no attribute 'TransposeBB'; did you mean 'TransposeB'"),
    (lambda x, root: ops.MatMul.TransposeB(True).TransposAa(True),
     r"no setter 'TransposAa'; did you mean 'TransposeA'"),
    (lambda x, root: ops.MatMul(root, x, x, transpose_bb=True),
     r"keyword argument 'transpose_bb'; did you mean 'transpose_b'"),
    (lambda x, root: ops.MatMul(root, x, x).products, r"no attribute 'products'; did you mean 'product'"),
])
def test_misspellings_get_a_suggestion(root, mistake, message):
    x = ops.Placeholder(root, DT_FLOAT)
    with pytest.raises((AttributeError, TypeError), match=message):
        mistake(x, root)


def test_no_suggestion_when_nothing_is_close():
    with pytest.raises(AttributeError) as info:
        _ = ops.Zzzzqqq
    assert "did you mean" not in str(info.value)


def test_run_time_error_says_where_the_node_was_defined(root):
    p = ops.Placeholder(root, DT_INT32)
    q = ops.FloorDiv(root, p, 0)
    line = inspect.currentframe().f_lineno - 1
    with pytest.raises(errors.InvalidArgumentError) as info:
        ClientSession(root).Run({p: [1, 2]}, [q])
    assert info.value.defined_at == (__file__, line) == q.node().defined_at
    assert str(info.value.__cause__) == f"node 'FloorDiv' defined at {__file__}:{line}"


def test_nodes_made_inside_the_package_point_at_the_user_line(root):
    y = ops.Add(root, ops.Placeholder(root, DT_FLOAT), 1.0)
    line = inspect.currentframe().f_lineno - 1
    const = root.graph().find_node("Const/Const")  # made by the Add wrapper for the literal
    assert const.defined_at == (__file__, line) == y.node().defined_at


def test_null_op_as_run_target_shows_the_scope_status():
    root = Scope.NewRootScope(raise_errors=False)
    ops.Reshape(root, ops.Const(root, [1.0, 2.0, 3.0]), [2, 2])  # records the error; the scope is now in error
    after = ops.Neg(root, ops.Const(root, 1.0))                  # null: built on a scope in error
    with pytest.raises(errors.InvalidArgumentError, match=r"null op .*scope's status: INVALID_ARGUMENT: .*Reshape"):
        ClientSession(root).Run({}, [], [after])
    with pytest.raises(errors.InvalidArgumentError, match=r"null Output .*scope's status: INVALID_ARGUMENT"):
        ClientSession(root).Run([after.y])


@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_no_numpy_floating_point_warnings_from_a_run(backend):
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_FLOAT)
    big = ops.Placeholder(root, DT_FLOAT)
    fetches = [ops.Log(root, x), ops.Div(root, x, 0.0), ops.Sqrt(root, x), ops.Exp(root, ops.Mul(root, x, 1e30)),
               ops.Pow(root, x, -1.0), ops.Cast(root, ops.Mul(root, big, 1e30), DT_INT32),
               ops.SoftmaxCrossEntropyWithLogits(root, ops.Reshape(root, x, [1, 2]), [[np.inf, 0.0]]).loss]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ClientSession(root, backend=backend, fetch_numpy=True).Run({x: [0.0, -1.0], big: [3.0]}, fetches)
    assert np.isnan(out[0][1]) and np.isneginf(out[0][0])
    # outside a run NumPy's own settings are untouched
    assert np.geterr()["divide"] == "warn"
