"""Record the linear-algebra family's end-to-end GraphDefs, with TF's outputs, for tests/golden/linalg_models/.

Run with TensorFlow 2.21 (and Keras) installed: ``python tools/golden/linalg_models.py``.  Each case is what a
new user would export from TF: a Keras MultiHeadAttention layer (Einsum, Softmax), an STFT magnitude
(``tf.signal.stft`` + ``tf.abs``: framing, window, RFFT, ComplexAbs) and least-squares solves
(``tf.linalg.lstsq``: Cholesky of the normal equations, and MatrixSolveLs).  For each case it
writes ``<case>.pb`` (a frozen graph), ``<case>.npz`` (the feeds and TF's fetches) and one ``manifest.json``;
the tests import them without TensorFlow.
"""
from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from graphdef import run_in_tf  # noqa: E402  (tools/golden/graphdef.py: a GraphDef run by TF's Session)
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "linalg_models")
rng = np.random.default_rng(15)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _frozen(fn, *specs: tf.TensorSpec):
    """The frozen GraphDef of ``tf.function(fn)`` at ``specs`` and its output tensor names."""
    concrete = tf.function(fn).get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(concrete)
    return frozen.graph.as_graph_def(), [t.name for t in frozen.outputs]


def multi_head_attention():
    """A Keras 3 MultiHeadAttention layer (2 heads, key_dim 8) on a query and a value sequence: projections
    (EinsumDense, which TF lowers to BatchMatMulV2), the attention Einsums ("BTNH,BSNH->BNTS",
    "BNTS,BSNH->BTNH") and a Softmax."""
    tf.keras.utils.set_random_seed(15)
    layer = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)
    query, value = f32(2, 5, 16), f32(2, 7, 16)
    layer(query, value)  # builds the weights
    graph_def, fetches = _frozen(lambda q, v: layer(q, v, training=False),
                                 tf.TensorSpec([None, 5, 16], tf.float32, name="query"),
                                 tf.TensorSpec([None, 7, 16], tf.float32, name="value"))
    return graph_def, {"query:0": query, "value:0": value}, fetches


def stft_magnitude():
    """``|tf.signal.stft|`` of two 0.1 s signals at 8 kHz (frame 64, step 16, Hann window, fft_length 64):
    framing, a window multiply, RFFT and ComplexAbs."""
    t = np.arange(800, dtype=np.float32) / 8000
    signals = np.stack([np.sin(2 * np.pi * 440 * t), np.sign(np.sin(2 * np.pi * 1000 * t))]) + 0.1 * f32(2, 800)
    graph_def, fetches = _frozen(lambda x: tf.abs(tf.signal.stft(x, frame_length=64, frame_step=16, fft_length=64)),
                                 tf.TensorSpec([None, 800], tf.float32, name="signals"))
    return graph_def, {"signals:0": signals.astype(np.float32)}, fetches


def least_squares():
    """``tf.linalg.lstsq`` of a batch of overdetermined (6x3) and underdetermined (3x6) float64 systems: the fast
    path with and without l2_regularizer (TF's Python composite: normal equations, Cholesky, triangular solves)
    and the orthogonal-decomposition path (fast=False: a MatrixSolveLs node)."""
    def solves(tall, tall_rhs, wide, wide_rhs):
        return (tf.linalg.lstsq(tall, tall_rhs), tf.linalg.lstsq(tall, tall_rhs, l2_regularizer=0.5),
                tf.linalg.lstsq(tall, tall_rhs, fast=False), tf.linalg.lstsq(wide, wide_rhs),
                tf.linalg.lstsq(wide, wide_rhs, l2_regularizer=0.25))

    graph_def, fetches = _frozen(solves, tf.TensorSpec([None, 6, 3], tf.float64, name="tall"),
                                 tf.TensorSpec([None, 6, 2], tf.float64, name="tall_rhs"),
                                 tf.TensorSpec([None, 3, 6], tf.float64, name="wide"),
                                 tf.TensorSpec([None, 3, 2], tf.float64, name="wide_rhs"))
    feeds = {"tall:0": rng.standard_normal((4, 6, 3)), "tall_rhs:0": rng.standard_normal((4, 6, 2)),
             "wide:0": rng.standard_normal((4, 3, 6)), "wide_rhs:0": rng.standard_normal((4, 3, 2))}
    return graph_def, feeds, fetches


CASES = [multi_head_attention, stft_magnitude, least_squares]


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    manifest = {"tensorflow": tf.__version__, "cases": {}}
    for case in CASES:
        name = case.__name__
        graph_def, feeds, fetches = case()
        values = run_in_tf(graph_def, feeds, fetches)
        with open(os.path.join(OUT, f"{name}.pb"), "wb") as f:
            f.write(graph_def.SerializeToString(deterministic=True))
        arrays = {f"feed_{i}": np.asarray(v) for i, v in enumerate(feeds.values())}
        arrays.update({f"fetch_{i}": np.asarray(v) for i, v in enumerate(values)})
        np.savez_compressed(os.path.join(OUT, f"{name}.npz"), **arrays)
        manifest["cases"][name] = {"doc": " ".join(case.__doc__.split()), "feeds": list(feeds), "fetches": fetches,
                                   "ops": sorted({n.op for n in graph_def.node})}
        print(f"{name}: {len(graph_def.node)} nodes, ops {manifest['cases'][name]['ops']}", file=sys.stderr)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
