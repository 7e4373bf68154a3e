"""Element-wise math ops, Cast, AddN, MatMul and BatchMatMulV2: what the conformance harness does not cover.

Golden values and live differential tests of every op run in tests/conformance (from the declarations
in kernels/math); here: what the golden file must hold, TF's errors at build and run time with their
messages, the documented divergences, the special functions against Python's ``math``, and Cast's
live test (its inputs need the value generators of every conversion rule).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conformance import golden
from tests.conformance.live import check_against_tf
from tests.conformance.ours import run_ours
from tfops_py import DT_FLOAT, ClientSession, Scope, errors, ops
from tfops_py.framework.dtypes import DataType
from tfops_py.kernels.math import _cast, _math_cases

D = DataType
MODS = ["Mod", "FloorMod", "TruncateMod", "TruncateDiv"]
BINARY = ["AddV2", "Add", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "Maximum", "Minimum", "Pow", "Equal",
          "NotEqual", "Less", "Greater", "LogicalAnd", "LogicalOr", "GreaterEqual", "LessEqual", *MODS,
          "SquaredDifference", "DivNoNan", "Atan2", "Xlogy", "Xdivy", "Xlog1py", "BitwiseAnd", "BitwiseOr",
          "BitwiseXor", "LeftShift", "RightShift"]
UNARY = ["Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid", "Sign", "Reciprocal", "Inv",
         "Floor", "Ceil", "Round", "Rint", "IsNan", "IsInf", "IsFinite", "LogicalNot", "Invert", "Sin", "Cos",
         "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Expm1", "Log1p", "Erf", "Erfc",
         "Lgamma", "Digamma"]
MATH_OPS = set(BINARY + UNARY + ["Cast", "AddN", "MatMul", "BatchMatMulV2", "ClipByValue"])
REAL_TYPES = [D.DT_FLOAT, D.DT_DOUBLE, D.DT_HALF, D.DT_BFLOAT16, D.DT_INT8, D.DT_INT16, D.DT_INT32, D.DT_INT64,
              D.DT_UINT8, D.DT_UINT16, D.DT_UINT32, D.DT_UINT64, D.DT_BOOL]
TYPES = REAL_TYPES + [D.DT_COMPLEX64, D.DT_COMPLEX128]
BOOL_ONLY = ("LogicalAnd", "LogicalOr", "LogicalNot")


def test_golden_covers_the_brief():
    cases = [c for c in golden.load("math_ops").cases if c.op in MATH_OPS]
    assert {c.op for c in cases} == MATH_OPS
    dtypes = {c.raw["inputs"][0][0] for c in cases if not isinstance(c.raw["inputs"][0][0], list)}
    assert {"float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8", "complex64",
            "complex128", "bool"} <= dtypes
    casts = {(c.raw["inputs"][0][0], c.raw["eager"]["outputs"][0][0]) for c in cases if c.op == "Cast"}
    assert len(casts) == len(_cast.SUPPORTED) ** 2


# -- errors ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Div", "FloorDiv", "RealDiv", "Mod", "FloorMod"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_integer_division_by_zero(op, dtype, backend):
    x, y = np.array([4, 5], dtype), np.array([1, 0], dtype)
    if op == "Mod" and dtype == np.uint8:
        dtype = np.int32  # Mod's OpDef: int32, int64 and floats only
    with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
        run_ours(op, [x.astype(dtype), y.astype(dtype)], {}, backend)


@pytest.mark.parametrize("op", ["Div", "FloorDiv", "Mod", "FloorMod", "TruncateDiv"])
def test_zero_divisor_with_an_empty_output_is_no_error(op, backend):
    """TF checks the divisors while computing the output: nothing to compute, nothing to report."""
    (out,) = run_ours(op, [np.zeros((0, 2), np.int32), np.array([-2, 0], np.int32)], {}, backend, feed=True)
    assert out.shape == (0, 2)


@pytest.mark.parametrize("op", ["TruncateDiv", "TruncateMod"])
def test_truncating_division_by_zero_is_internal_error_as_tf(op, backend):
    x, y = np.array([4, 5], np.int32), np.array([1, 0], np.int32)
    with pytest.raises(errors.InternalError) as e:
        run_ours(op, [x, y], {}, backend, feed=True)
    assert e.value.message == "Unexpected error in binary operator (only integer div and mod should have errors)"


def test_float_mod_by_zero_is_nan(backend):
    for op in MODS[:3]:
        (out,) = run_ours(op, [np.array([1, -1, 0], np.float32), np.zeros(3, np.float32)], {}, backend)
        assert np.isnan(out).all()


@pytest.mark.parametrize("op, dtype", [("Reciprocal", np.int32), ("Inv", np.int8), ("Round", np.complex64),
                                       ("TruncateDiv", np.complex128)])
def test_dtypes_without_a_tf_kernel_are_unimplemented(op, dtype, backend):
    x = np.ones(2, dtype)
    with pytest.raises(errors.UnimplementedError, match=f"{op} is not defined for .*TensorFlow has no such kernel"):
        run_ours(op, [x] * (2 if op == "TruncateDiv" else 1), {}, backend)


def test_round_of_integers_is_the_input(backend):
    """TF's int32/int64 Round kernel returns zeros (tf.round never calls it); we return the input."""
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        x = np.array([-20, -13, 7, 1], dtype)
        np.testing.assert_array_equal(run_ours("Round", [x], {}, backend)[0], x)


def test_erf_of_infinity_is_one(backend):
    """TF's float64 Erf gives NaN at +-inf (its float32 and half kernels give +-1); we give +-1 everywhere."""
    for dtype in (np.float64, np.float32):
        (out,) = run_ours("Erf", [np.array([np.inf, -np.inf, np.nan], dtype)], {}, backend)
        np.testing.assert_array_equal(out, np.array([1, -1, np.nan], dtype))


def test_special_functions_against_the_standard_library(backend):
    """float64 accuracy without TF: Python's math.erf/erfc/lgamma (correctly rounded or nearly) as reference."""
    import math

    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(400) * 4, rng.uniform(-30, 30, 200), 10 ** rng.uniform(-12, 2, 100),
                        1 + rng.standard_normal(50) * 1e-6, 2 + rng.standard_normal(50) * 1e-6, [0.5, -0.5, 26.0]])
    for op, fn, tol in (("Erf", math.erf, 1e-15), ("Erfc", math.erfc, 3e-15), ("Lgamma", math.lgamma, 2e-15)):
        ref = np.array([fn(v) if op != "Lgamma" or v > 0 or v != round(v) else math.inf for v in x])
        (out,) = run_ours(op, [x], {}, backend)
        normal = np.abs(ref) > 1e-300
        scale = np.maximum(np.abs(ref), 1.0) if op == "Lgamma" else np.abs(ref)  # see the Lgamma docstring
        err = np.abs(out - ref)[normal] / scale[normal]
        assert err.max() <= tol, f"{op}: {err.max():.3g} at {x[normal][np.argmax(err)]!r}"


def test_digamma_poles_and_reflection(backend):
    x = np.array([0.0, -1.0, -2.0, -np.inf, np.inf, 1.0, 0.5, -0.5, -2.5, 1.4616321449683622])
    (out,) = run_ours("Digamma", [x], {}, backend)
    euler = 0.5772156649015329
    want = [np.nan, np.nan, np.nan, np.nan, np.inf, -euler, -euler - 2 * np.log(2), 0.03648997397857652,
            1.1031566406452432, 0.0]
    np.testing.assert_allclose(out, want, rtol=1e-14, atol=2e-15)


def test_shifts_clamp_the_shift_amount(backend):
    x = np.array([3, 3, 3, -300, -1, 1], np.int32)
    y = np.array([-5, 100, 2**31 - 1, 100, 40, 31], np.int32)
    np.testing.assert_array_equal(run_ours("LeftShift", [x, y], {}, backend)[0],
                                  [3, -2**31, -2**31, 0, -2**31, -2**31])
    np.testing.assert_array_equal(run_ours("RightShift", [x, y], {}, backend)[0], [3, 0, 0, -1, -1, 0])


def test_float_division_by_zero_is_inf_or_nan(backend):
    (out,) = run_ours("Div", [np.array([1, -1, 0], np.float32), np.zeros(3, np.float32)], {}, backend)
    np.testing.assert_array_equal(out, [np.inf, -np.inf, np.nan])


def test_integer_pow_negative_exponent(backend):
    with pytest.raises(errors.InvalidArgumentError, match="Integers to negative integer powers are not allowed"):
        run_ours("Pow", [np.array([1, 2], np.int32), np.array([-1, 2], np.int32)], {}, backend)


@pytest.mark.parametrize("op", ["AddV2", "Mul", "Div", "Pow", "Maximum", "Equal", "LogicalAnd", "FloorDiv", "Mod",
                                "FloorMod", "TruncateDiv", "SquaredDifference", "LogicalOr", "LeftShift"])
def test_incompatible_shapes_at_build_and_run_time(op, backend):
    dt = bool if op in BOOL_ONLY else np.int32
    x, y = np.ones(2, dt), np.ones(3, dt)
    with pytest.raises(errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        run_ours(op, [x, y], {}, backend)
    with pytest.raises(errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        run_ours(op, [x, y], {}, backend, feed=True)


@pytest.mark.parametrize("feed", [False, True])
def test_equality_without_incompatible_shape_error(feed, backend):
    x, y = np.ones(2, np.float32), np.ones(3, np.float32)
    for op, want in (("Equal", False), ("NotEqual", True)):
        (out,) = run_ours(op, [x, y], {"incompatible_shape_error": False}, backend, feed=feed)
        assert out.shape == () and out.dtype == bool and bool(out) is want
    (out,) = run_ours("Equal", [x[:1], y], {"incompatible_shape_error": False}, backend, feed=feed)
    np.testing.assert_array_equal(out, [True, True, True])
    (out,) = run_ours("Equal", [x[:0], x], {"incompatible_shape_error": False}, backend, feed=feed)  # [0] vs [2]
    assert out.shape == () and bool(out) is False


def test_equality_shape_function_without_error():
    root = Scope.NewRootScope()
    a = ops.Placeholder(root, DT_FLOAT, ops.Placeholder.Shape([-1]))
    b = ops.Placeholder(root, DT_FLOAT, ops.Placeholder.Shape([3]))
    c = ops.Placeholder(root, DT_FLOAT, ops.Placeholder.Shape([2, 1]))
    assert ops.Equal(root, a, b, incompatible_shape_error=False).z.shape().unknown_rank()
    assert ops.Equal(root, c, b, incompatible_shape_error=False).z.shape() == [2, 3]
    assert ops.Equal(root, ops.Const(root, [1.0, 2.0]), b, incompatible_shape_error=False).z.shape() == []


def test_add_n_needs_equal_shapes(backend):
    a, b = np.ones(2, np.float32), np.ones(3, np.float32)
    message = r"must have the same size and shape.  Input 0: \[2\] != input 1: \[3\]"
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours("AddN", [[a, b]], {}, backend)
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours("AddN", [[a, b]], {}, backend, feed=True)
    with pytest.raises(errors.InvalidArgumentError, match=r"Input 0: \[2\] != input 1: \[1,2\]"):
        run_ours("AddN", [[a, a[None]]], {}, backend, feed=True)


@pytest.mark.parametrize("feed", [False, True])
def test_matmul_errors(feed, backend):
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Matrix size-incompatible: In\[0\]: \[2,3\], In\[1\]: \[4,5\]"):
        run_ours("MatMul", [a, b], {}, backend, feed=feed)
    with pytest.raises(errors.InvalidArgumentError, match=r"In\[0\]"):
        run_ours("MatMul", [np.ones((2, 3, 1), np.float32), b], {}, backend, feed=feed)
    x, y = np.ones((2, 3, 4), np.float32), np.ones((5, 4, 2), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match=r"must have compatible batch dimensions: \[2,3,4\] vs. "
                                                          r"\[5,4,2\]"):
        run_ours("BatchMatMulV2", [x, y], {}, backend, feed=feed)
    with pytest.raises(errors.InvalidArgumentError, match=r"Matrix size-incompatible"):
        run_ours("BatchMatMulV2", [x, np.ones((2, 3, 2), np.float32)], {}, backend, feed=feed)
    with pytest.raises(errors.InvalidArgumentError, match=r"In\[0\] ndims must be >= 2: 1"):
        run_ours("BatchMatMulV2", [np.ones(4, np.float32), np.ones((4, 2), np.float32)], {}, backend, feed=feed)


def test_matmul_grad_attrs_are_ignored_and_unsigned_types_computed(backend):
    a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    (out,) = run_ours("MatMul", [a, a.T.copy()], {"grad_a": True, "grad_b": True}, backend)
    np.testing.assert_array_equal(out, (a.astype(np.int64) @ a.T).astype(np.uint8))


def test_floor_div_complex_is_unimplemented(backend):
    x = np.array([1 + 1j], np.complex64)
    with pytest.raises(errors.UnimplementedError, match="FloorDiv"):
        run_ours("FloorDiv", [x, x], {}, backend)


@pytest.mark.parametrize("feed", [False, True])
def test_clip_by_value_bounds_must_be_scalars_or_the_input_shape(feed, backend):
    t = np.zeros((2, 3), np.float32)
    message = (r"clip_value_min and clip_value_max must be either of the same shape as input, or a scalar. "
               r"input shape: \[2,3\]clip_value_min shape: \[3\]clip_value_max shape: \[\]")
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours("ClipByValue", [t, np.zeros(3, np.float32), np.float32(1)], {}, backend, feed=feed)
    with pytest.raises(errors.InvalidArgumentError, match=r"clip_value_min shape: \[1\]clip_value_max shape: \[1,1\]"):
        run_ours("ClipByValue", [np.float32(3), np.zeros(1, np.float32), np.ones((1, 1), np.float32)], {}, backend,
                 feed=feed)


def test_clip_by_value_shape_function():
    root = Scope.NewRootScope()
    t = ops.Placeholder(root, DT_FLOAT, ops.Placeholder.Shape([-1, 3]))
    lo = ops.Placeholder(root, DT_FLOAT, ops.Placeholder.Shape([2, -1]))
    hi = ops.Placeholder(root, DT_FLOAT)
    assert ops.ClipByValue(root, t, lo, hi).output.shape() == [2, 3]
    assert ops.ClipByValue(root, t, 0.0, 1.0).output.shape() == [-1, 3]
    with pytest.raises(errors.InvalidArgumentError, match=r"input shape: \[\?,3\]clip_value_min shape: \[3\]"):
        ops.ClipByValue(root, t, ops.Const(root, [0.0, 0.0, 0.0]), 1.0)


def test_clip_by_value_complex_keeps_infinite_parts(backend):
    """Complex values are clipped part by part; infinite or NaN imaginary parts survive the recombination."""
    t = np.array([complex(1, np.inf), complex(np.nan, -np.inf), complex(3, np.nan), 5 - 1j], np.complex128)
    lo, hi = np.complex128(complex(0, -np.inf)), np.complex128(complex(2, np.inf))
    (out,) = run_ours("ClipByValue", [t, lo, hi], {}, backend)
    np.testing.assert_array_equal(out, np.array([complex(1, np.inf), complex(np.nan, -np.inf), complex(2, np.nan),
                                                 2 - 1j]))


def test_clip_by_value_unsigned_64_bit(backend):
    """TF has no uint32/uint64 kernel; ours compares in the type (no trip through int64)."""
    t = np.array([2**64 - 1, 5, 2**63], np.uint64)
    (out,) = run_ours("ClipByValue", [t, np.uint64(7), np.uint64(2**63 + 1)], {}, backend)
    np.testing.assert_array_equal(out, np.array([2**63 + 1, 7, 2**63], np.uint64))


@pytest.mark.parametrize("src, dst", [(D.DT_STRING, D.DT_FLOAT), (D.DT_FLOAT, D.DT_STRING),
                                      (D.DT_FLOAT, D.DT_FLOAT8_E5M2)])
def test_cast_unsupported_types(src, dst):
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, src)
    y = ops.Cast(root, x, dst)
    value = np.array([b"1"], object) if src == D.DT_STRING else np.ones(1, np.float32)
    with pytest.raises(errors.UnimplementedError, match="Cast .* is not supported"):
        ClientSession(root).Run({x: value}, [y])


def test_cast_string_to_string_is_identity():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, D.DT_STRING)
    (out,) = ClientSession(root).Run({x: np.array([b"a"], object)}, [ops.Cast(root, x, D.DT_STRING)])
    assert list(out) == [b"a"]


# -- documented behaviour ----------------------------------------------------------------------------------
def test_scalar_chain_keeps_float32():
    """The session-overhead benchmark's shape: a long chain of scalar AddV2/Mul."""
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_FLOAT)
    y = x
    for i in range(200):
        y = ops.AddV2(root, y, np.float32(1)) if i % 2 == 0 else ops.Mul(root, y, np.float32(1))
    (out,) = ClientSession(root).Run({x: np.float32(0.5)}, [y])
    assert out.dtype == np.float32 and float(out) == 100.5


def test_minimum_maximum_propagate_nan(backend):
    x, y = np.array([np.nan, 1, np.nan], np.float32), np.array([1, np.nan, np.nan], np.float32)
    for op in ("Maximum", "Minimum"):
        assert np.isnan(run_ours(op, [x, y], {}, backend)[0]).all()


def test_cast_truncate_zeroes_low_mantissa_bits():
    x = np.array([1 + 2.0**-11 + 2.0**-13, 65530.0, 1e-7 + 3e-12, 70000.0], np.float32)
    (t,) = run_ours("Cast", [x], {"DstT": D.DT_HALF, "Truncate": True})
    (r,) = run_ours("Cast", [x], {"DstT": D.DT_HALF})
    np.testing.assert_array_equal(t, np.array([1.0, 65504.0, 1.1920929e-07, np.inf], np.float16))
    np.testing.assert_array_equal(r, x.astype(np.float16))


def test_cast_double_to_half_rounds_through_float():
    (out,) = run_ours("Cast", [np.array([1 + 2.0**-11 + 2.0**-40])], {"DstT": D.DT_HALF})
    assert out[0] == 1.0  # NumPy's direct conversion gives 1.001


def test_float_to_int_rules(backend):
    """Toward zero through int32 (INT_MIN when invalid), then saturated like TF's vectorized loop."""
    x = np.array([np.nan, np.inf, -3.7, 2.5e9, 300.5, -200.5], np.float32)
    (i32,) = run_ours("Cast", [x], {"DstT": D.DT_INT32}, backend)
    (i8,) = run_ours("Cast", [x], {"DstT": D.DT_INT8}, backend)
    np.testing.assert_array_equal(i32, [-2**31, -2**31, -3, -2**31, 300, -200])
    np.testing.assert_array_equal(i8, [-128, -128, -3, -128, 127, -128])


# -- Cast's live test (every other op's runs in tests/conformance/test_live.py) ---------------------------------
def _cast_types(backend: str) -> list[DataType]:
    types = [t for t in TYPES if t in _cast.SUPPORTED]
    return [t for t in types if backend == "numpy" or t not in (D.DT_HALF, D.DT_BFLOAT16)]


@pytest.mark.tf
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cast_matches_tf(backend, data):
    src = data.draw(st.sampled_from(_cast_types(backend)))
    dst = data.draw(st.sampled_from(_cast_types(backend)))
    truncate = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if truncate and (src, dst) in _cast.TRUNCATING and (src, dst) != (D.DT_DOUBLE, D.DT_COMPLEX64):
        x = _math_cases.truncation_values(rng, src, dst)
    else:
        truncate = truncate and (src, dst) != (D.DT_DOUBLE, D.DT_COMPLEX64)  # TF's bug, see docs
        # 256 elements: all in TF's vectorized loop; other sizes: values its scalar tail agrees on
        n = data.draw(st.sampled_from([256, 512, 0, 1, 5, 33]))
        x = _math_cases.cast_values(rng, src, dst, n, any_position=n % 256 != 0)
        x = x.reshape(data.draw(st.sampled_from([(n,), (2, n // 2)])) if n % 2 == 0 else (n,))
    check_against_tf("Cast", [x], {"DstT": dst, "Truncate": truncate}, backend,
                     mode=data.draw(st.sampled_from(["const", "feed"])))
