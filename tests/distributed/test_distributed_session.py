"""Sessions on a Dask LocalCluster: TF's job/task placement, state on its task, clean failures."""
from __future__ import annotations

import contextlib
import os
import threading
import time

import numpy as np
import pytest

from tfops_py import ops
from tfops_py.client.session import ClientSession
from tfops_py.client.session_options import SessionOptions
from tfops_py.errors import AbortedError, InvalidArgumentError, UnavailableError
from tfops_py.framework.operation import as_output
from tfops_py.framework.scope import Scope
from tfops_py.distributed import DistributedSession, worker

PS, W0, W1 = "/job:ps/replica:0/task:0", "/job:worker/task:0/device:CPU:0", "/job:worker/task:1"


def _ps_worker_graph():
    """A variable on ps; each worker task scales a fed vector by it; ps sums the results into it."""
    s = Scope.NewRootScope()
    ps, w0, w1 = s.WithDevice(PS), s.WithDevice(W0), s.WithDevice(W1)
    x = ops.Placeholder(s.WithOpName("x"), "float")
    v = ops.Variable(ps.WithOpName("v"), [3], "float")
    init = ops.Assign(ps.WithOpName("init"), v, ops.Const(s, [1.0, 2.0, 3.0]))
    a = ops.Mul(w0.WithOpName("a"), x, v)
    b = ops.Square(w1.WithOpName("b"), a)
    c = ops.Add(s.WithOpName("c"), b, ops.Const(s, 1.0))  # no device: runs with its input, on worker 1
    update = ops.AssignAdd(ps.WithOpName("update"), v, ops.Sub(ps, c, a))
    return s, x, init, a, b, c, update


def _steps(session, x, init, a, b, c, update):
    session.Run([], [], [init])
    out = []
    for k in range(3):
        feed = {x: np.arange(3, dtype=np.float32) + k}
        out.append(session.Run(feed, [a, b, c]))
        session.Run(feed, [], [update])
    return out


def test_placed_graph_runs_as_in_one_process(dask_client, ps_cluster):
    s, *nodes = _ps_worker_graph()
    remote = ClientSession(s, target=dask_client, cluster=ps_cluster)
    assert isinstance(remote, DistributedSession)
    got = _steps(remote, *nodes)
    want = _steps(ClientSession(s), *nodes)
    for g, w in zip(got, want):
        for gv, wv in zip(g, w):
            np.testing.assert_array_equal(gv, wv)
    plan = remote._plan((as_output(nodes[0]),), (as_output(nodes[4]),), ())  # fetch c
    tasks = {n.name: p.task for p in plan.partitions for n in p.nodes}
    assert tasks["a"] == ("worker", 0) and tasks["b"] == ("worker", 1) and tasks["c"] == ("worker", 1)
    remote.Close()


def test_state_lives_on_its_task(dask_client, ps_cluster):
    s, x, init, *_ = _ps_worker_graph()
    remote = ClientSession(s, target=dask_client, cluster=ps_cluster)
    remote.Run([], [], [init])
    held = dask_client.run(lambda sid: {k: sorted(map(str, st.resources)) for k, st in worker._STATES.items()
                                        if k.startswith(sid)}, remote.session_id)
    ps_addr = remote.cluster.address(("ps", 0))
    assert any("v" in names for names in held[ps_addr].values())
    assert all(not any("v" in n for n in names.values()) for a, names in held.items() if a != ps_addr)
    remote.Close()
    left = dask_client.run(lambda sid: [k for k in worker._STATES if k.startswith(sid)], remote.session_id)
    assert not any(left.values())


def test_tensors_cross_partitions_worker_to_worker(dask_client, ps_cluster):
    s, x, init, a, b, c, update = _ps_worker_graph()
    remote = ClientSession(s, target=dask_client, cluster=ps_cluster)
    remote.Run([], [], [init])
    plan = remote._plan((as_output(x),), (as_output(c),), ())
    assert [(p.task, p.stage) for p in plan.partitions] == [(("ps", 0), 0), (("worker", 0), 1), (("worker", 1), 2)]
    worker1 = plan.partitions[2]
    assert {o.node().name for o in worker1.recvs} == {"a"}  # a comes from worker 0, not through the client
    (got,) = remote.Run({x: np.ones(3, np.float32)}, [c])
    np.testing.assert_array_equal(got, np.array([2, 5, 10], np.float32))


def test_session_from_options_and_address(dask_client):
    s = Scope.NewRootScope()
    y = ops.Add(s.WithDevice("/job:worker/task:2"), ops.Const(s, [1, 2]), ops.Const(s, [10, 20]))
    options = SessionOptions(target=dask_client.scheduler.address)
    remote = ClientSession(s, options)
    assert isinstance(remote, DistributedSession) and len(remote.ListDevices()) == 3
    (got,) = remote.Run([y])
    np.testing.assert_array_equal(got, [11, 22])
    remote.Close()
    assert remote.client.status == "closed"  # the session made that client, and closed it


def test_unknown_task_and_worker_errors(dask_client, ps_cluster):
    s = Scope.NewRootScope()
    bad = ops.Neg(s.WithDevice("/job:worker/task:7").WithOpName("far"), ops.Const(s, 1.0))
    remote = ClientSession(s, target=dask_client, cluster=ps_cluster)
    with pytest.raises(InvalidArgumentError, match=r"operation far: /job:worker/replica:0/task:7 is not a task"):
        remote.Run([bad])
    s2 = Scope.NewRootScope()
    x = ops.Placeholder(s2.WithOpName("x"), "float")
    m = ops.MatMul(s2.WithDevice(W1).WithOpName("mm"), x, x)
    remote2 = ClientSession(s2, target=dask_client, cluster=ps_cluster)
    with pytest.raises(InvalidArgumentError, match=r"MatMul node 'mm'") as e:
        remote2.Run({x: np.ones((2, 3), np.float32)}, [m])
    assert e.value.defined_at is not None and e.value.defined_at[0].endswith("test_distributed_session.py")
    with pytest.raises(UnavailableError, match="no Dask worker named"):
        ClientSession(s, target=dask_client, cluster={"ps": ["nobody"]})


def test_loop_on_one_task_and_functional_ops(dask_client, ps_cluster):
    s = Scope.NewRootScope()
    w1 = s.WithDevice(W1)
    start = ops.Mul(s.WithDevice(W0), ops.Const(s, 2.0), ops.Const(s, 3.0))

    outs = ops.BuildWhileLoop(w1, [start], lambda sc, v: ops.Less(sc, v[0], 100.0),
                              lambda sc, v: [ops.Mul(sc, v[0], 2.0)], "loop")
    remote = ClientSession(s, target=dask_client, cluster=ps_cluster)
    np.testing.assert_array_equal(remote.Run([outs[0]])[0], ClientSession(s).Run([outs[0]])[0])


def test_workers_run_the_sessions_backend(dask_client, ps_cluster):
    s, *nodes = _ps_worker_graph()
    remote = ClientSession(s, "array_api_strict", target=dask_client, cluster=ps_cluster)
    got = _steps(remote, *nodes)
    want = _steps(ClientSession(s), *nodes)
    for g, w in zip(got, want):
        for gv, wv in zip(g, w):
            assert type(gv) is np.ndarray  # fetches come back as NumPy from any backend
            np.testing.assert_array_equal(gv, wv)
    remote.Close()


def test_lost_worker_is_a_clean_error(dask_client, ps_cluster):
    s = Scope.NewRootScope()
    ps, w0 = s.WithDevice(PS), s.WithDevice(W0)
    big = ops.Fill(w0, ops.Const(s, [1500, 1500]), 1e-3)
    for _ in range(12):
        big = ops.MatMul(w0, big, big)
    slow = ops.Sum(w0, big, [0, 1])
    on_ps = ops.Add(ps.WithOpName("on_ps"), ops.Const(s, 1.0), ops.Const(s, 2.0))
    remote = ClientSession(s, target=dask_client, cluster=ps_cluster)
    assert remote.Run([on_ps])[0] == 3.0
    w0_addr = remote.cluster.address(("worker", 0))
    errors: list[BaseException] = []

    def run() -> None:
        try:
            remote.Run([slow])
        except BaseException as e:  # noqa: BLE001 (the assertion below looks at it)
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(1.0)
    with contextlib.suppress(Exception):  # the worker process dies mid-Run (its nanny restarts it)
        dask_client.run(os._exit, 1, workers=[w0_addr])
    t.join(timeout=120)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], AbortedError), errors
    assert "/job:worker/replica:0/task:0" in str(errors[0])
    with pytest.raises(UnavailableError, match="task:0 is unavailable"):
        remote.Run([slow])
    assert remote.Run([on_ps])[0] == 3.0  # tasks whose workers are alive keep working
    dask_client.wait_for_workers(3, timeout=120)
