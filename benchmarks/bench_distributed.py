"""Batch inference on a Dask cluster: a Keras CNN over 2,048 images with 1 and 2 worker processes.

Each worker process has one thread (and its sessions a one-thread budget), so the ratio of the two
throughputs is the scaling across processes.  TF's Keras ``predict`` on the same frozen graph, in this
process with its default threads, is printed alongside.  The overhead of a partition boundary is the
per-hop time of a chain of tiny ops alternating between two tasks.

    python benchmarks/bench_distributed.py [--images 2048] [--batch 128]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def keras_cnn_graph_def(size: int = 32):
    """A small Keras CNN (conv-pool-conv-pool-dense), frozen by TF to a GraphDef with its weights as constants."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([
        tf.keras.Input((size, size, 3)),
        tf.keras.layers.Conv2D(32, 3, activation="relu"), tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(64, 3, activation="relu"), tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(), tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10),
    ])
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(
        tf.TensorSpec([None, size, size, 3], tf.float32))
    frozen = convert_variables_to_constants_v2(fn)
    return model, frozen.graph.as_graph_def().SerializeToString(), frozen.inputs[0].name, frozen.outputs[0].name


def throughput(client, gd: bytes, x_name: str, y_name: str, images: np.ndarray, batch: int, reps: int,
               on_cluster: bool = False) -> float:
    """Images per second of RunBatches; ``on_cluster``: the images are a Dask array already on the workers
    (data that lives on the cluster), else NumPy sent from the client on every run."""
    from tfops_py import ClientSession, Scope
    from tfops_py.client.session_options import SessionOptions
    from tfops_py.graphdef import import_graph_def

    root = Scope.NewRootScope()
    g = import_graph_def(root, gd)
    options = SessionOptions(target=client)
    options.config.intra_op_parallelism_threads = 1
    session = ClientSession(root, options)
    x, y = g[x_name.removesuffix(":0")], g[y_name.removesuffix(":0")]
    if on_cluster:
        import dask.array as da

        images = da.from_array(images, chunks=(batch, *images.shape[1:])).persist()
    session.RunBatches({x: images}, [y], batch_size=batch)  # warm: plans built on every worker
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        session.RunBatches({x: images}, [y], batch_size=batch)
        times.append(time.perf_counter() - t0)
    session.Close()
    return len(images) / statistics.median(times)


def boundary_overhead_ms(client, hops: int = 20, reps: int = 5) -> float:
    """Milliseconds per partition boundary: a chain of tiny ops alternating between two tasks."""
    from tfops_py import ClientSession, Scope, ops

    root = Scope.NewRootScope()
    v = ops.Const(root, np.ones(4, np.float32))
    for k in range(hops):
        v = ops.Add(root.WithDevice(f"/job:worker/task:{k % 2}"), v, 1.0)
    session = ClientSession(root, target=client)
    flat = ops.Add(root.WithDevice("/job:worker/task:0"), ops.Const(root, np.ones(4, np.float32)), 1.0)
    session.Run([v])
    session.Run([flat])
    chain = statistics.median(_timed(lambda: session.Run([v]), reps))
    one = statistics.median(_timed(lambda: session.Run([flat]), reps))
    session.Close()
    return 1e3 * (chain - one) / (hops - 1)


def _timed(fn, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    model, gd, x_name, y_name = keras_cnn_graph_def()
    images = np.random.default_rng(0).random((args.images, 32, 32, 3), dtype=np.float32)
    t0 = time.perf_counter()
    model.predict(images, batch_size=args.batch, verbose=0)
    tf_rate = args.images / (time.perf_counter() - t0)
    rates, resident = {}, {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as lc, \
                Client(lc) as client:
            rates[workers] = throughput(client, gd, x_name, y_name, images, args.batch, args.reps)
            resident[workers] = throughput(client, gd, x_name, y_name, images, args.batch, args.reps, True)
            if workers == 2:
                hop = boundary_overhead_ms(client)
    print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    print(f"keras CNN, {args.images} images of 32x32x3, batch {args.batch}")
    print(f"  NumPy feed (sent from the client each run): 1 worker {rates[1]:8.1f} images/s, 2 workers "
          f"{rates[2]:8.1f} images/s, scaling {rates[2] / rates[1]:.2f}x (target >= 1.7x)")
    print(f"  Dask array on the workers:                  1 worker {resident[1]:8.1f} images/s, 2 workers "
          f"{resident[2]:8.1f} images/s, scaling {resident[2] / resident[1]:.2f}x (target >= 1.7x)")
    print(f"  TF predict in this process (all cores): {tf_rate:8.1f} images/s   "
          f"ratio TF/ours(2 workers, NumPy feed) {tf_rate / rates[2]:.2f}")
    print(f"partition boundary: {hop:.2f} ms per hop")


if __name__ == "__main__":
    main()
