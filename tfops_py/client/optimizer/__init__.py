"""The graph optimizer: run once when a plan is built, on the pruned request, never on the user's Graph.

Passes, in order, each switchable through ``RewriterConfig`` (``client/session_options.py``):
dependency optimization (Identity forwarding), common-subexpression elimination, constant folding,
arithmetic simplification, then remapping (Pad into convolutions, batch-norm folding, fused
Conv2D/DepthwiseConv2dNative/MatMul epilogues, per-channel affine + activation as one batch norm).  Ops a pass
does not know are left alone.  ``$TFOPS_OPTIMIZE=0`` turns the
optimizer off for every session (tests use it to compare optimized and unoptimized plans).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from tfops_py.client.optimizer import folding, remap
from tfops_py.client.optimizer.ir import Program
from tfops_py.client.session_options import OFF, ConfigProto
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import Output

_DEFAULT = ConfigProto()


def pass_enabled(config: Any, name: str) -> bool:
    """Is rewrite pass ``name`` on in ``config`` (a ConfigProto, ours or TF's)?"""
    rewrite = getattr(getattr(config, "graph_options", None), "rewrite_options", None)
    if rewrite is None:
        return True
    if getattr(rewrite, "disable_meta_optimizer", False):
        return False
    return getattr(rewrite, name, 0) != OFF


def max_folded_bytes(config: Any) -> int:
    rewrite = getattr(getattr(config, "graph_options", None), "rewrite_options", None)
    return int(getattr(rewrite, "max_folded_constant_bytes", 0) or 10 << 20)


def enabled() -> bool:
    return os.environ.get("TFOPS_OPTIMIZE", "1") not in ("0", "")


def optimize(nodes: Sequence[Node], feeds: set[Output], fetches: Sequence[Output], targets: Sequence[Node],
             backend_for: Callable[[Any], Any], config: Any = None) -> tuple[list[Node], list[Output]]:
    """(nodes to run in order, fetches as Outputs of those nodes or of fed tensors)."""
    config = config or _DEFAULT
    names = ("dependency_optimization", "common_subgraph_elimination", "constant_folding",
             "arithmetic_optimization", "remapping")
    on = {n: pass_enabled(config, n) for n in names}
    if not enabled() or not any(on.values()):
        return list(nodes), list(fetches)
    prog = Program.build(nodes, feeds, fetches, targets)
    if on["dependency_optimization"]:
        folding.remove_identities(prog)
    if on["common_subgraph_elimination"]:
        folding.eliminate_common_subexpressions(prog)
    if on["constant_folding"]:
        folding.fold_constants(prog, folding.Evaluator(backend_for, None), max_folded_bytes(config))
    if on["arithmetic_optimization"]:
        folding.simplify_arithmetic(prog)
    if on["remapping"]:
        remap.fold_pads(prog)
        remap.fold_batch_norms(prog)
        remap.fuse_epilogues(prog)
        remap.fuse_affine_activations(prog)
        remap.fuse_batch_norm_activations(prog)
    return prog.materialize()


__all__ = ["optimize", "enabled"]
