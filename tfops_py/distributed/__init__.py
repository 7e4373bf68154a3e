"""Graphs on a Dask cluster: TF's job/task placement and data-parallel batch runs (``[dask]`` extra).

``ClientSession(scope, target=client_or_address)`` returns a :class:`DistributedSession`; see
docs/distributed.md.  Importing this package needs ``dask.distributed``.
"""
from __future__ import annotations

from tfops_py.distributed.cluster import ClusterMap
from tfops_py.distributed.session import DistributedSession

__all__ = ["ClusterMap", "DistributedSession"]
