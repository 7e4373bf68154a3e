"""TF1-style distributed training on a Dask cluster: parameters on a ps task, gradients on two workers.

One graph with placements (TF's in-graph replication): the weights live on ``/job:ps/task:0``; each of the
two ``/job:worker`` tasks computes the loss and gradients of its half of every batch; the ps task averages
the gradients and applies them (synchronous SGD).  The same graph also runs in one process, and the
losses are compared step by step: they are the same numbers, because the same kernels run in the same
order, only in different processes.

    python examples/distributed_training.py                 # starts a LocalCluster of three processes
    python examples/distributed_training.py --scheduler tcp://host:8786 --steps 200
"""
from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from tfops_py import DT_FLOAT, AddSymbolicGradients, ClientSession, Scope, ops

PS = "/job:ps/task:0"


def build(rng: np.random.Generator, features: int = 8, hidden: int = 16, rate: float = 0.05) -> dict[str, Any]:
    """A two-layer regression network, data-parallel over two worker tasks."""
    root = Scope.NewRootScope()
    ps = root.WithDevice(PS)
    initial = {"w1": rng.standard_normal((features, hidden)).astype(np.float32) * 0.3,
               "b1": np.zeros(hidden, np.float32),
               "w2": rng.standard_normal((hidden, 1)).astype(np.float32) * 0.3,
               "b2": np.zeros(1, np.float32)}
    names = list(initial)
    params = {n: ops.Variable(ps.WithOpName(n), list(v.shape), DT_FLOAT) for n, v in initial.items()}
    init = [ops.Assign(ps.WithOpName(f"{n}/init"), params[n], v) for n, v in initial.items()]
    feeds, losses, grads = [], [], []
    for k in range(2):
        w = root.WithDevice(f"/job:worker/task:{k}").NewSubScope(f"worker{k}")
        x = ops.Placeholder(w.WithOpName("x"), DT_FLOAT)
        y = ops.Placeholder(w.WithOpName("y"), DT_FLOAT)
        h = ops.Relu(w, ops.BiasAdd(w, ops.MatMul(w, x, params["w1"]), params["b1"]))
        pred = ops.BiasAdd(w, ops.MatMul(w, h, params["w2"]), params["b2"])
        loss = ops.Mean(w, ops.Square(w, ops.Sub(w, pred, y)), [0, 1])
        feeds.append((x, y))
        losses.append(loss)
        grads.append(AddSymbolicGradients(w, [loss], [params[n] for n in names]))
    mean_loss = ops.Mul(ps.WithOpName("loss"), ops.Add(ps, losses[0], losses[1]), 0.5)
    train = [ops.ApplyGradientDescent(ps.WithOpName(f"{n}/update"), params[n], rate,
                                      ops.Mul(ps, ops.Add(ps, grads[0][i], grads[1][i]), 0.5))
             for i, n in enumerate(names)]
    return {"root": root, "init": init, "feeds": feeds, "loss": mean_loss, "train": train}


def data(rng: np.random.Generator, n: int = 2048, features: int = 8) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((n, features)).astype(np.float32)
    y = (np.sin(x[:, :1] * 2) + 0.5 * x[:, 1:2] * x[:, 2:3]).astype(np.float32)
    return x, y


def train(session: ClientSession, g: dict[str, Any], x: np.ndarray, y: np.ndarray, steps: int,
          batch: int = 128) -> list[float]:
    """Synchronous SGD; each batch is split in two halves, one per worker task."""
    session.Run([], [], g["init"])
    history = []
    half = batch // 2
    for step in range(steps):
        start = (step * batch) % (len(x) - batch + 1)
        (x0, y0), (x1, y1) = g["feeds"]
        feed = {x0: x[start:start + half], y0: y[start:start + half],
                x1: x[start + half:start + batch], y1: y[start + half:start + batch]}
        (loss,) = session.Run(feed, [g["loss"]], g["train"])
        history.append(float(loss))
    return history


def main(argv: list[str] | None = None) -> list[float]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scheduler", help="a Dask scheduler address (default: start a LocalCluster)")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    g = build(np.random.default_rng(0))
    x, y = data(np.random.default_rng(1))
    cluster = None if args.scheduler else LocalCluster(n_workers=3, threads_per_worker=1, host="127.0.0.1",
                                                       dashboard_address=None)
    client = Client(args.scheduler or cluster)
    try:
        names = sorted(info["name"] for info in client.scheduler_info()["workers"].values())
        spec = {"ps": names[:1], "worker": names[1:3]}
        remote = ClientSession(g["root"], target=client, cluster=spec)
        distributed_losses = train(remote, g, x, y, args.steps)
        remote.Close()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    local_losses = train(ClientSession(g["root"]), g, x, y, args.steps)
    for step in range(0, args.steps, max(1, args.steps // 6)):
        print(f"step {step:4d}  loss {distributed_losses[step]:.6f}  (one process: {local_losses[step]:.6f})")
    same = distributed_losses == local_losses
    print(f"final loss {distributed_losses[-1]:.6f}; identical to the single-process run: {same}")
    if not same:
        raise SystemExit("the distributed run diverged from the single-process run")
    return distributed_losses


if __name__ == "__main__":
    main()
