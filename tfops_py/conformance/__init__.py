"""Conformance declarations: how each op is checked against TensorFlow, and where it departs from TF.

Kernel modules declare, next to each kernel (records only: nothing is computed at import)::

    conformance("Softplus", features=floats(specials=True), grad=True)
    conformance("Cumsum", x=values(), axis=axis_of("x"), exclusive=BOOL, reverse=BOOL,
                cases=[case(x=int_extremes("int32"), axis=0)])
    divergence("FusedBatchNormGrad", when="is_training=False with NCHW", tf="refuses the layout",
               ours="computes it (TF's NHWC answer, transposed)")

``tests/conformance`` turns the declarations into golden cases (``tools/conformance/gen_golden.py``),
live differential tests, backend x dtype runs and gradient checks; ``tools/gen_op_index.py`` renders
them into docs/op_index.md, docs/divergences.md and the family pages.
"""
from tfops_py.conformance.domains import (Domain, Draw, axis_of, draw_any, draw_values, float_specials, floats,
                                          index_into, int_extremes, literal, nonzero, positive, reduction_axes, shape,
                                          shape_of,
                                          small, sorted_ids, uniform, values)
from tfops_py.conformance.references import Reference, reference, returns_inputs, via_dtype, via_op
from tfops_py.conformance.spec import (ALLOWED, BOOL, BROADCAST, SAME, Case, CaseList, Divergence, Formula, GraphCase,
                                       OneOf, ShapeRule, Spec, case, case_builders, conformance, divergence,
                                       divergences, families, family_cases, family_modules, formula, graph_case,
                                       one_of, spec_of, specs)

__all__ = ["ALLOWED", "BOOL", "BROADCAST", "SAME", "Case", "CaseList", "Divergence", "Domain", "Draw", "Formula",
           "GraphCase",
           "OneOf", "Reference", "ShapeRule", "Spec", "axis_of", "case", "case_builders", "conformance", "divergence",
           "divergences", "draw_any", "draw_values", "families", "family_cases", "family_modules", "float_specials",
           "floats", "formula", "graph_case", "index_into", "int_extremes", "literal", "nonzero", "one_of", "positive",
           "reduction_axes", "reference", "returns_inputs", "shape", "shape_of", "small", "sorted_ids", "spec_of",
           "specs", "uniform", "values", "via_dtype", "via_op"]
