"""Loading a ~100 MB SavedModel: tfops_py's loader next to TF's, time and peak memory.

A Keras ResNet50 (weights=None: random weights, ~100 MB of variables) is exported by TF into a temporary
directory.  Each loader then runs in a fresh child process that first imports its library (the baseline),
then loads the model and runs it once on one image; the child reports the load time, the first call's
time, and its peak resident memory above the baseline (``ru_maxrss``).  Children alternate, three each.

    python benchmarks/bench_saved_model.py [--model ResNet50] [--reps 3]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_EXPORT = """
import keras, sys
model = getattr(keras.applications, sys.argv[1])(weights=None)
model.export(sys.argv[2], verbose=False)
print(sum(w.numpy().nbytes for w in model.weights))
"""

_CHILD = """
import json, resource, sys, time
import numpy as np
which, path = sys.argv[1], sys.argv[2]
if which == "tf":
    import tensorflow as tf
else:
    from tfops_py import saved_model
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if which == "tf":
    model = tf.saved_model.load(path)
    fn = model.signatures["serving_default"]
else:
    model = saved_model.load(path)
    fn = model.signatures["serving_default"]
t1 = time.perf_counter()
x = np.random.default_rng(0).random((1, 224, 224, 3), dtype=np.float32)
name = next(iter(fn.structured_input_signature[1])) if which == "tf" else next(iter(fn.inputs))
out = fn(**{name: tf.constant(x)}) if which == "tf" else fn({name: x})
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"load_s": t1 - t0, "first_call_s": t2 - t1, "peak_mb": (peak - base) / 1024}))
"""


def run_child(which: str, path: str) -> dict:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, which, path], capture_output=True, text=True, env=env,
                          timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"{which} loader failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="ResNet50")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, args.model)
        proc = subprocess.run([sys.executable, "-c", _EXPORT, args.model, path], capture_output=True, text=True,
                              env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, timeout=1800)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-3000:])
        weights_mb = int(proc.stdout.strip().splitlines()[-1]) / 2**20
        runs: dict[str, list[dict]] = {"ours": [], "tf": []}
        for _ in range(args.reps):
            for which in ("ours", "tf"):
                runs[which].append(run_child(which, path))
    med = {w: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for w, rs in runs.items()}
    print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    print(f"{args.model} SavedModel, {weights_mb:.0f} MB of weights; medians of {args.reps} fresh processes each")
    print(f"{'':12s} {'load_s':>8s} {'first_call_s':>13s} {'peak_MB':>9s}")
    for w in ("ours", "tf"):
        print(f"{w:12s} {med[w]['load_s']:8.2f} {med[w]['first_call_s']:13.2f} {med[w]['peak_mb']:9.0f}")
    print(f"ratio ours/TF: load {med['ours']['load_s'] / med['tf']['load_s']:.2f}, "
          f"peak memory {med['ours']['peak_mb'] / med['tf']['peak_mb']:.2f}")


if __name__ == "__main__":
    main()
