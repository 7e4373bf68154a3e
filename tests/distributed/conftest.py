"""One LocalCluster for the distributed tests: worker processes on loopback, one thread each."""
from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="package")
def dask_client():
    cluster = distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, worker_class=distributed.Nanny)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close(timeout=30)


@pytest.fixture
def ps_cluster(dask_client):
    """TF's ClusterSpec for the three workers: one ps task and two worker tasks."""
    from tfops_py.distributed.cluster import scheduler_workers

    names = sorted(info["name"] for info in scheduler_workers(dask_client).values())
    return {"ps": [names[0]], "worker": names[1:]}
