"""Keras application models (frozen graphs): tfops_py next to TensorFlow in the same process.

    python benchmarks/bench_models.py [--models ResNet50,MobileNetV2] [--batch 1,8] [--reps 15]
                                      [--contention 2] [--tf-native] [--no-optimizer] [--memory] [--onnx]

Models come from ``tools/export_keras_models.py`` (written once to ~/.cache/tfops_py/models,
weights=None with a fixed seed).  TF runs the same GraphDef in a v1 Session with its default build
(oneDNN on) unless ``--tf-native`` (a child process with TF_ENABLE_ONEDNN_OPTS=0).  The two sides
alternate run by run (``_harness.time_pair``): medians of wall and process CPU time, and their ratios.
``--contention N`` repeats the timings while N busy processes compete for the cores and prints the
ratio under contention next to the quiet one.  ``--memory`` measures the peak RSS growth of loading and running
the model, each side alone in a fresh child process; ``--onnx`` adds onnxruntime (through tf2onnx) where the ``[bench]``
extra is installed.  Also prints the GraphDef import time and the first Run (plan build with the optimizer, then the
run) against a steady Run.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
sys.path.insert(0, str(HERE))

from export_keras_models import DEFAULT_SIZE, MODELS, export  # noqa: E402
from _harness import time_pair  # noqa: E402
from tfops_py.kernels.nn import _jit  # noqa: E402

SMALL = ("MobileNetV2", "ResNet50", "MobileNetV3Large", "EfficientNetB0")


def _busy(stop_at: float) -> None:
    x = 0
    while time.time() < stop_at:
        x += 1


class Ours:
    def __init__(self, path: str, options=None):
        from tfops_py import ClientSession, Scope, import_graph_def

        t0 = time.perf_counter()
        root = Scope.NewRootScope()
        graph = import_graph_def(root, path)
        self.import_s = time.perf_counter() - t0
        self.sess = ClientSession(root, options) if options is not None else ClientSession(root)
        self.x, self.y = graph["x"], graph["Identity"]

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self.sess.Run({self.x: batch}, [self.y])[0]


class Theirs:
    def __init__(self, path: str):
        import tensorflow as tf

        gd = tf.compat.v1.GraphDef()
        with open(path, "rb") as f:
            gd.ParseFromString(f.read())
        graph = tf.Graph()
        with graph.as_default():
            tf.compat.v1.import_graph_def(gd, name="")
        self.sess = tf.compat.v1.Session(graph=graph)

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self.sess.run("Identity:0", {"x:0": batch})


class Onnx:
    def __init__(self, path: str):
        import onnxruntime as ort
        import tensorflow as tf
        import tf2onnx

        gd = tf.compat.v1.GraphDef()
        with open(path, "rb") as f:
            gd.ParseFromString(f.read())
        model, _ = tf2onnx.convert.from_graph_def(gd, input_names=["x:0"], output_names=["Identity:0"])
        self.sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self.sess.run(None, {"x:0": batch})[0]


def _describe() -> str:
    load = os.getloadavg()
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
            f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} at start")


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _memory_child(framework: str, path: str, batch: int, size: int) -> None:
    """Print the peak RSS growth (MiB) of loading and running the model, in this fresh process.

    The high-water mark is reset after the imports (``/proc/self/clear_refs``); ``ru_maxrss`` would
    not do, Linux carries the parent's peak into a child."""
    if framework == "tf":
        import tensorflow  # noqa: F401
    else:
        import tfops_py  # noqa: F401
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = _status_kib("VmRSS")
    fn = Theirs(path) if framework == "tf" else Ours(path)
    x = np.random.default_rng(0).random((batch, size, size, 3), dtype=np.float32)
    for _ in range(3):
        fn(x)
    print(json.dumps({"peak_mib": (_status_kib("VmHWM") - base) / 1024}))


def _peak(framework: str, path: str, batch: int, size: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--memory-child", framework, path, str(batch), str(size)],
                         capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])["peak_mib"]
    except (IndexError, ValueError, KeyError):
        return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(SMALL), help=f"comma-separated, or 'all' ({','.join(MODELS)})")
    parser.add_argument("--batch", default="1,8")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--contention", type=int, default=0, help="also time with N busy processes")
    parser.add_argument("--tf-native", action="store_true", help="TF with its native kernels (oneDNN off)")
    parser.add_argument("--no-optimizer", action="store_true", help="our graph optimizer off")
    parser.add_argument("--memory", action="store_true", help="peak RSS of each side alone")
    parser.add_argument("--onnx", action="store_true", help="also onnxruntime via tf2onnx ([bench] extra)")
    parser.add_argument("--memory-child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        framework, path, batch, size = args.memory_child
        _memory_child(framework, path, int(batch), int(size))
        return
    if args.tf_native and os.environ.get("TF_ENABLE_ONEDNN_OPTS") != "0":
        env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0", TF_CPP_MIN_LOG_LEVEL="3")
        sys.exit(subprocess.call([sys.executable, __file__] + sys.argv[1:], env=env))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    models = list(MODELS) if args.models == "all" else args.models.split(",")
    options = None
    if args.no_optimizer:
        from tfops_py.client.session_options import ConfigProto, GraphOptions, RewriterConfig, SessionOptions

        options = SessionOptions(config=ConfigProto(graph_options=GraphOptions(
            RewriterConfig(disable_meta_optimizer=True))))
    tf_kind = "TF native kernels" if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "0" else "TF default (oneDNN)"
    print(f"machine: {_describe()}; against {tf_kind}; optimizer {'off' if args.no_optimizer else 'on'}")
    print(f"{'model':17s} {'b':>2s} {'ours_ms':>8s} {'tf_ms':>8s} {'ratio':>6s} {'ours_cpu':>8s} {'tf_cpu':>8s} "
          f"{'cpu_r':>6s} {'import_s':>8s} {'first/steady':>12s}"
          + (f" {'ort_ms':>7s} {'/ort':>5s}" if args.onnx else "")
          + (f" {'busy_r':>6s}" if args.contention else "") + (f" {'mem_MiB':>8s} {'tf_MiB':>7s}" if args.memory
                                                                else ""), flush=True)
    for name in models:
        path = export(name)
        size = DEFAULT_SIZE.get(name, 224)
        t0 = time.perf_counter()
        ours = Ours(path, options)
        theirs = Theirs(path)
        for batch in [int(b) for b in args.batch.split(",")]:
            x = np.random.default_rng(0).random((batch, size, size, 3), dtype=np.float32)
            first0 = time.perf_counter()
            ours(x)
            first = time.perf_counter() - first0
            _jit.wait_ready(120)  # numba's background load (the [jit] extra) must not be timed as steady state
            got, want = ours(x), theirs(x)
            err = float(np.max(np.abs(got - want)))
            t = time_pair(lambda: ours(x), lambda: theirs(x), args.reps)
            line = (f"{name:17s} {batch:2d} {t.ours_ms:8.2f} {t.tf_ms:8.2f} {t.ratio:6.2f} {t.ours_cpu_ms:8.2f} "
                    f"{t.tf_cpu_ms:8.2f} {t.cpu_ratio:6.2f} {ours.import_s:8.2f} "
                    f"{first * 1e3 / t.ours_ms:12.1f}")
            if args.onnx:
                try:
                    ort = Onnx(path)
                    to = time_pair(lambda: ours(x), lambda: ort(x), args.reps)
                    line += f" {to.tf_ms:7.2f} {to.ratio:5.2f}"
                except ImportError:
                    line += f" {'-':>7s} {'-':>5s}"
            if args.contention:
                stop = time.time() + 3600
                procs = [multiprocessing.Process(target=_busy, args=(stop,), daemon=True)
                         for _ in range(args.contention)]
                for p in procs:
                    p.start()
                try:
                    tb = time_pair(lambda: ours(x), lambda: theirs(x), args.reps)
                finally:
                    for p in procs:
                        p.terminate()
                        p.join()
                line += f" {tb.ratio:6.2f}"
            if args.memory:
                line += f" {_peak('ours', path, batch, size):8.0f} {_peak('tf', path, batch, size):7.0f}"
            print(line + ("" if err < 1e-3 * max(1.0, float(np.max(np.abs(want)))) else f"  (max diff {err:.2g}!)"),
                  flush=True)
        del ours, theirs
        _ = t0


if __name__ == "__main__":
    main()
