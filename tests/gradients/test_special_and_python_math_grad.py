"""Gradients of special_math_grad.py and python_math_grad.py: finite differences and tf.GradientTape.

Every op TF differentiates in Python only among the math family's special functions, scans, segment
reductions and selections has a case here (the last test checks that).
"""
from __future__ import annotations

import numpy as np

from tests.gradients.harness import GradCase, case_tests
from tfops_py import ops
from tfops_py.gradients import special_math_grad
from tfops_py.gradients.python_math_grad import BEYOND_TF_CC as PYTHON_OPS
from tfops_py.gradients.special_math_grad import BEYOND_TF_CC as SPECIAL_OPS

_rng = np.random.default_rng(2024)


def r(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return _rng.uniform(lo, hi, size=shape)


def node(name: str):
    """``name``'s op class, or a node-builder call for ops without a C++ class (the Bessel functions …)."""
    return getattr(ops, name, None) or (lambda s, *xs, **attrs: special_math_grad.node(s, name, *xs, **attrs))


def unary(name: str, x: np.ndarray, **kw) -> GradCase:
    return GradCase(name, lambda s, a: node(name)(s, a), lambda tf, a: getattr(tf.raw_ops, name)(x=a), (x,), **kw)


def positive(*shape: int, lo: float = 0.5, hi: float = 3.0) -> np.ndarray:
    return r(*shape, lo=lo, hi=hi)


IDS = [0, 0, 1, 3]
CASES = [
    *(unary(op, r(2, 3)) for op in ("BesselI0", "BesselI0e", "BesselJ0", "Dawsn", "FresnelCos", "FresnelSin")),
    # TF imputes I1'(0) = 1; the derivative is 1/2 (see the divergence): TF is compared away from 0
    unary("BesselI1", np.array([[0.2, 0.4, -0.7], [1.2, -2.0, 0.3]])),
    GradCase("BesselI1_at_0", lambda s, a: node("BesselI1")(s, a), None, (np.array([0.0, 1e-3]),)),
    # e^-|x| has a kink at 0: central differences there are off by delta / 2
    unary("BesselI1e", np.array([[0.0, 0.4, -0.7], [1.2, -2.0, 0.3]]), tol=1e-4),
    unary("BesselJ1", np.array([[0.0, 0.4, -0.7], [1.2, -2.0, 0.3]])),
    *(unary(op, positive(2, 3)) for op in ("BesselK0", "BesselK0e", "BesselK1", "BesselK1e", "BesselY0", "BesselY1",
                                            "Expint", "Digamma")),
    unary("Spence", np.array([[0.3, 1.0, 2.5], [0.7, 1.6, 4.0]])),
    GradCase("Igamma", lambda s, a, x: ops.Igamma(s, a, x), lambda tf, a, x: tf.raw_ops.Igamma(a=a, x=x),
             (positive(2, 3), positive(3)), tol=1e-5),
    GradCase("Igammac", lambda s, a, x: ops.Igammac(s, a, x), lambda tf, a, x: tf.raw_ops.Igammac(a=a, x=x),
             (positive(2, 1), positive(2, 3, lo=1.5, hi=4.0)), tol=1e-5),
    GradCase("Betainc", lambda s, x: ops.Betainc(s, np.array([[1.5, 2.0, 0.7]]), np.array([[2.5, 1.0, 3.0]]), x),
             lambda tf, x: tf.raw_ops.Betainc(a=tf.constant([[1.5, 2.0, 0.7]], tf.float64),
                                              b=tf.constant([[2.5, 1.0, 3.0]], tf.float64), x=x),
             (r(1, 3, lo=0.2, hi=0.8),)),
    GradCase("Zeta", lambda s, q: ops.Zeta(s, np.array([[2.0], [3.5]]), q),
             lambda tf, q: tf.raw_ops.Zeta(x=tf.constant([[2.0], [3.5]], tf.float64), q=q), (positive(2, 3),)),
    GradCase("Polygamma", lambda s, x: ops.Polygamma(s, np.array([[0.0, 1.0, 2.0]]), x),
             lambda tf, x: tf.raw_ops.Polygamma(a=tf.constant([[0.0, 1.0, 2.0]], tf.float64), x=x),
             (positive(2, 3),), tol=1e-5),
    GradCase("EuclideanNorm", lambda s, a: ops.EuclideanNorm(s, a, [1]),
             lambda tf, a: tf.raw_ops.EuclideanNorm(input=a, axis=[1]), (r(2, 3, 4),)),
    GradCase("EuclideanNorm_keep_dims", lambda s, a: ops.EuclideanNorm(s, a, [0, 2], keep_dims=True),
             lambda tf, a: tf.raw_ops.EuclideanNorm(input=a, axis=[0, 2], keep_dims=True), (r(2, 3, 4),)),
    GradCase("MulNoNan", lambda s, a, b: ops.MulNoNan(s, a, b), lambda tf, a, b: tf.raw_ops.MulNoNan(x=a, y=b),
             (r(2, 3), np.array([0.5, 0.0, -1.0]))),
    GradCase("NextAfter", lambda s, a, b: ops.NextAfter(s, a, b), lambda tf, a, b: tf.raw_ops.NextAfter(x1=a, x2=b),
             (r(2, 3), r(3)), numeric=False,
             why="nextafter is a step function: TF's gradient is 1, not its derivative"),
    GradCase("InvGrad", lambda s, y, dy: node("InvGrad")(s, y, dy), lambda tf, y, dy: tf.raw_ops.InvGrad(y=y, dy=dy),
             (r(2, 3), r(2, 3))),
    GradCase("Cumprod", lambda s, a: ops.Cumprod(s, a, 1), lambda tf, a: tf.raw_ops.Cumprod(x=a, axis=1),
             (positive(2, 4),)),
    GradCase("Cumprod_exclusive_reverse", lambda s, a: ops.Cumprod(s, a, 0, exclusive=True, reverse=True),
             lambda tf, a: tf.raw_ops.Cumprod(x=a, axis=0, exclusive=True, reverse=True), (positive(3, 2),)),
    GradCase("CumulativeLogsumexp", lambda s, a: ops.CumulativeLogsumexp(s, a, 1),
             lambda tf, a: tf.raw_ops.CumulativeLogsumexp(x=a, axis=1), (r(2, 4),)),
    GradCase("CumulativeLogsumexp_reverse", lambda s, a: ops.CumulativeLogsumexp(s, a, 0, reverse=True),
             lambda tf, a: tf.raw_ops.CumulativeLogsumexp(x=a, axis=0, reverse=True), (r(3, 2),)),
    GradCase("TopKV2", lambda s, a: ops.TopK(s, a, 2).values, lambda tf, a: tf.raw_ops.TopKV2(input=a, k=2)[0],
             (r(3, 5),)),
    GradCase("TopK", lambda s, a: special_math_grad.node(s, "TopK", a, k=3),
             lambda tf, a: tf.raw_ops.TopKV2(input=a, k=3)[0], (r(2, 4),)),
    GradCase("ApproxTopK", lambda s, a: ops.ApproxTopK(s, a, 2).values,
             lambda tf, a: tf.raw_ops.ApproxTopK(input=a, k=2)[0], (r(3, 5).astype(np.float32),),
             numeric=False, why="ApproxTopK has no float64 kernel (OpDef): float32 is compared with TF only"),
    GradCase("NthElement", lambda s, a: ops.NthElement(s, a, 1), lambda tf, a: tf.raw_ops.NthElement(input=a, n=1),
             (r(3, 4),)),
    GradCase("SegmentMean", lambda s, a: ops.SegmentMean(s, a, IDS),
             lambda tf, a: tf.raw_ops.SegmentMean(data=a, segment_ids=IDS), (r(4, 3),)),
    GradCase("SegmentMax", lambda s, a: ops.SegmentMax(s, a, IDS),
             lambda tf, a: tf.raw_ops.SegmentMax(data=a, segment_ids=IDS), (r(4, 3),)),
    GradCase("SegmentMin", lambda s, a: ops.SegmentMin(s, a, IDS),
             lambda tf, a: tf.raw_ops.SegmentMin(data=a, segment_ids=IDS), (r(4, 3),)),
    GradCase("SegmentProd", lambda s, a: ops.SegmentProd(s, a, IDS),
             lambda tf, a: tf.raw_ops.SegmentProd(data=a, segment_ids=IDS),
             (np.array([[0.5, 0.0, 1.2], [1.5, 0.0, -0.7], [0.0, 0.3, 0.9], [1.1, -0.4, 0.6]]),)),
    GradCase("UnsortedSegmentProd", lambda s, a: ops.UnsortedSegmentProd(s, a, [2, -1, 0, 2], 3),
             lambda tf, a: tf.raw_ops.UnsortedSegmentProd(data=a, segment_ids=[2, -1, 0, 2], num_segments=3),
             (np.array([[0.5, 0.0, 1.2], [1.5, 0.0, -0.7], [0.0, 0.3, 0.9], [1.1, -0.4, 0.6]]),)),
    *(GradCase(f"SparseSegment{kind}{suffix}",
               lambda s, a, kind=kind, extra=extra, sg=sg: getattr(ops, f"SparseSegment{kind}{suffix_of(extra)}")(
                   s, a, [0, 2, 2, 3], [0, 0, 1, 3], *extra, sparse_gradient=sg),
               lambda tf, a, kind=kind, extra=extra, sg=sg: getattr(
                   tf.raw_ops, f"SparseSegment{kind}{suffix_of(extra)}")(
                   data=a, indices=[0, 2, 2, 3], segment_ids=[0, 0, 1, 3], sparse_gradient=sg,
                   **({"num_segments": 5} if extra else {})),
               (r(5, 2),))
      for kind in ("Sum", "Mean", "SqrtN")
      for suffix, extra, sg in (("", (), False), ("WithNumSegments", (5,), False), ("_sparse_gradient", (), True))),
]


def suffix_of(extra: tuple) -> str:
    return "WithNumSegments" if extra else ""


test_gradient_matches_finite_differences, test_gradient_matches_tensorflow = case_tests(CASES)


def test_every_python_only_gradient_has_a_case():
    covered = {c.id.split("_")[0] for c in CASES}
    covered |= {c.id.replace("WithNumSegments", "") for c in CASES}
    missing = sorted(op for op in {*PYTHON_OPS, *SPECIAL_OPS}
                     if op not in covered and op.replace("WithNumSegments", "") not in covered
                     and not any(c.id.startswith(op) for c in CASES))
    assert not missing, f"no gradient case for {missing}"
