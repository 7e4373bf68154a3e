"""``tensorflow::SessionOptions`` and the ConfigProto fields a session reads.

TF client code passes these to ``ClientSession(scope, options)``, ``NewSession(options)`` and
``LoadSavedModel(options, ...)``.  Beyond TF's ``target`` and ``config``, the options name the
backend the session runs on (``"numpy"``, ``"cupy"``, an array-API namespace) and its device map,
as ``ClientSession``'s arguments do.  Of ``config`` tfops_py honours ``allow_soft_placement``,
``intra_op_parallelism_threads`` (the thread budget of a Run) and ``graph_options.rewrite_options``
(the graph optimizer's passes, see docs/optimizer.md); the other fields (device counts, GPU memory,
…) configure TF's runtime and are accepted and ignored, so code that sets them ports unchanged.  Field names are TF's
(``config.experimental.disable_optimize_for_static_graph``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

# TF's RewriterConfig.Toggle values (rewriter_config.proto)
DEFAULT, ON, OFF, AGGRESSIVE = 0, 1, 2, 3


@dataclass
class GPUOptions:
    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""


@dataclass
class RewriterConfig:
    """Which graph optimizer passes run when a plan is built (all on by default, as in TF).

    ``constant_folding`` (constant subgraphs and build-time-known shapes, evaluated once per plan),
    ``common_subgraph_elimination``, ``arithmetic_optimization`` (x*1, x+0, transposes and reshapes of
    transposes and reshapes), ``dependency_optimization`` (Identity, Snapshot, StopGradient, IdentityN
    forwarding), ``remapping`` (batch-norm folding into weights and bias; Conv2D/DepthwiseConv2dNative/
    MatMul + BiasAdd [+ Add] [+ activation] as one fused kernel).  ``disable_meta_optimizer`` turns all
    off.  ``max_folded_constant_bytes`` (ours) caps a folded result that would be larger than the
    constants it replaces.
    """

    DEFAULT: ClassVar[int] = DEFAULT
    ON: ClassVar[int] = ON
    OFF: ClassVar[int] = OFF
    AGGRESSIVE: ClassVar[int] = AGGRESSIVE

    constant_folding: int = DEFAULT
    common_subgraph_elimination: int = DEFAULT
    arithmetic_optimization: int = DEFAULT
    dependency_optimization: int = DEFAULT
    remapping: int = DEFAULT
    disable_meta_optimizer: bool = False
    max_folded_constant_bytes: int = 10 << 20


@dataclass
class GraphOptions:
    rewrite_options: RewriterConfig = field(default_factory=RewriterConfig)
    enable_recv_scheduling: bool = False
    build_cost_model: int = 0
    infer_shapes: bool = False
    place_pruned_graph: bool = False


@dataclass
class ConfigProtoExperimental:
    disable_optimize_for_static_graph: bool = False
    optimize_for_static_graph: bool = False
    use_tfrt: bool = False
    disable_thread_spinning: bool = False
    executor_type: str = ""


@dataclass
class ConfigProto:
    """The ``ConfigProto`` fields by TF's names; ``allow_soft_placement``, ``intra_op_parallelism_threads``
    (threads one Run may use; 0: the cores this process may use) and ``graph_options.rewrite_options``
    change what tfops_py does."""

    device_count: dict[str, int] = field(default_factory=dict)
    intra_op_parallelism_threads: int = 0
    inter_op_parallelism_threads: int = 0
    use_per_session_threads: bool = False
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    operation_timeout_in_ms: int = 0
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    graph_options: GraphOptions = field(default_factory=GraphOptions)
    experimental: ConfigProtoExperimental = field(default_factory=ConfigProtoExperimental)


class SessionOptions:
    """``tensorflow::SessionOptions``: ``target`` (empty: this process; a Dask scheduler address or
    ``dask.distributed.Client``: a cluster, see docs/distributed.md), ``config`` (a
    :class:`ConfigProto` or anything with its field names), plus the session's ``backend`` and
    ``devices``.  ``allow_soft_placement`` reads and writes ``config.allow_soft_placement``."""

    def __init__(self, backend: Any = None, *, devices: Mapping[str, Any] | None = None,
                 allow_soft_placement: bool = False, target: Any = "", config: Any = None):
        self.backend = backend
        self.devices = devices
        self.target = target
        self.config = config if config is not None else ConfigProto()
        if allow_soft_placement:
            self.config.allow_soft_placement = True

    @property
    def allow_soft_placement(self) -> bool:
        return bool(self.config.allow_soft_placement)

    @allow_soft_placement.setter
    def allow_soft_placement(self, value: bool) -> None:
        self.config.allow_soft_placement = value

    def __repr__(self) -> str:
        return (f"SessionOptions(backend={self.backend!r}, devices={self.devices!r}, target={self.target!r}, "
                f"config={self.config!r})")


__all__ = ["ConfigProto", "GPUOptions", "GraphOptions", "RewriterConfig", "SessionOptions"]
