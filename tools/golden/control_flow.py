"""Record control-flow graphs made by TensorFlow, with TF's outputs, for tests/golden/control_flow/.

Run with TensorFlow 2.21 installed (``python tools/golden/control_flow.py [case ...|programs]``).  Each case
builds a GraphDef with TF: TF1 dataflow loops and conds (``Enter``/``Merge``/``Switch``
...), TF2 functions (``While``/``If``/``Case`` with a function library), graphs frozen
with ``lower_control_flow=True``, Keras RNNs, TensorArray/TensorList programs.  It
writes ``<case>.pb``, ``<case>.npz`` (feeds and TF's fetched values per run) and
``manifest.json``.  The tests import them without TensorFlow; the live tests call the
builders below directly.
"""
from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tfops_py.kernels.control_flow._graph_cases import tf1_control_flow as control_flow_v1  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "control_flow")
tf1 = tf.compat.v1


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def f32(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.uniform(-1.0, 1.0, size=shape).astype(np.float32)


# ----------------------------------------------------------------------------- TF1 dataflow control flow
def v1_while_simple():
    """while i < n: i += 1, acc *= x (two loop variables, placeholders as bounds)."""
    g = tf.Graph()
    with g.as_default(), control_flow_v1():
        n = tf1.placeholder(tf.int32, [], name="n")
        x = tf1.placeholder(tf.float32, [], name="x")
        i, acc = tf1.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * x), [tf.constant(0), tf.constant(1.0)])
        tf.identity(i, name="i_out")
        tf.identity(acc, name="acc_out")
    runs = [{"n:0": np.int32(k), "x:0": np.float32(v)} for k, v in ((0, 2.0), (1, -3.0), (6, 1.5))]
    return g.as_graph_def(), runs, ["i_out:0", "acc_out:0"]


def v1_nested():
    """A while with a cond and an inner while in its body; a while inside a cond branch (taken or not)."""
    g = tf.Graph()
    with g.as_default(), control_flow_v1():
        x = tf1.placeholder(tf.float32, [], name="x")

        def body(i, acc):
            acc2 = tf.cond(tf.equal(i % 2, 0), lambda: acc * x, lambda: acc + 1.0)
            inner = tf1.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + 0.5), [tf.constant(0), acc2])
            return i + 1, inner[1]

        r = tf1.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.constant(1.0)])
        c = tf.cond(x > 0, lambda: tf1.while_loop(lambda k: k < 3.0, lambda k: k + x, [x]), lambda: x - 1.0)
        tf.identity(r[1], name="loop_out")
        tf.identity(c, name="cond_out")
    runs = [{"x:0": np.float32(v)} for v in (2.0, -2.0, 0.25)]
    return g.as_graph_def(), runs, ["loop_out:0", "cond_out:0"]


def v1_conds():
    """tf.cond with several outputs, nested conds, tf.case with a default branch."""
    g = tf.Graph()
    with g.as_default(), control_flow_v1():
        x = tf1.placeholder(tf.float32, [3], name="x")
        k = tf1.placeholder(tf.int32, [], name="k")
        s = tf.reduce_sum(x)
        a, b = tf.cond(s > 0, lambda: (x * 2.0, tf.reduce_max(x)),
                       lambda: (tf.cond(s < -1.0, lambda: -x, lambda: x + 1.0), tf.reduce_min(x)))
        c = tf1.case([(tf.equal(k, 0), lambda: x + 10.0), (tf.equal(k, 1), lambda: x * x)], default=lambda: x - 5.0)
        tf.identity(a, name="a")
        tf.identity(b, name="b")
        tf.identity(c, name="c")
    r = rng(1)
    runs = [{"x:0": f32(r, 3) + off, "k:0": np.int32(kk)} for off, kk in ((1.0, 0), (-1.5, 1), (0.0, 2), (-0.4, 7))]
    return g.as_graph_def(), runs, ["a:0", "b:0", "c:0"]


def v1_while_shapes():
    """A loop whose variable grows (shape invariant [None]), parallel_iterations=1, a loop-invariant capture."""
    g = tf.Graph()
    with g.as_default(), control_flow_v1():
        n = tf1.placeholder(tf.int32, [], name="n")
        w = tf1.placeholder(tf.float32, [2, 2], name="w")
        v0 = tf.constant([1.0, 0.5])

        def body(i, seq, v):
            v = tf.linalg.matvec(w, v)
            return i + 1, tf.concat([seq, v[:1]], 0), v

        _, seq, v = tf1.while_loop(lambda i, s, v: i < n, body, [tf.constant(0), tf.zeros([0]), v0],
                                   shape_invariants=[tf.TensorShape([]), tf.TensorShape([None]), tf.TensorShape([2])],
                                   parallel_iterations=1)
        tf.identity(seq, name="seq")
        tf.identity(v, name="v")
    r = rng(2)
    runs = [{"n:0": np.int32(k), "w:0": f32(r, 2, 2)} for k in (0, 1, 7)]
    return g.as_graph_def(), runs, ["seq:0", "v:0"]


# ----------------------------------------------------------------------------- TF2 functions
def _concrete_graph(fn, *specs):
    concrete = tf.function(fn).get_concrete_function(*specs)
    return concrete.graph.as_graph_def(), [t.name for t in concrete.graph.inputs], \
        [t.name for t in concrete.graph.outputs]


def _while_cond_case(x):
    def body(i, a):
        a = tf.cond(a > 10.0, lambda: a - 3.0, lambda: a * 2.0)
        return i + 1, a

    _, a = tf.while_loop(lambda i, a: i < 6, body, [tf.constant(0), x])
    b = tf.switch_case(tf.cast(a, tf.int32) % 3, [lambda: a + 1.0, lambda: a * 10.0, lambda: -a])
    return a, b


def fn_while_cond_case():
    """tf.function: a functional While whose body has an If, then a Case (StatelessWhile/If/Case + library)."""
    gd, inputs, outputs = _concrete_graph(_while_cond_case, tf.TensorSpec([], tf.float32))
    runs = [{inputs[0]: np.float32(v)} for v in (1.5, -2.5, 11.0)]
    return gd, runs, outputs


def fn_nested_calls():
    """tf.function calling tf.functions (PartitionedCall), one of them with a While and a stateful op."""
    @tf.function
    def inner(v):
        return tf.while_loop(lambda k, s: k < 4, lambda k, s: (k + 1, s * 0.5 + v), [0, v])[1]

    @tf.function
    def middle(v):
        return inner(v) + inner(v * 2.0)

    def outer(x):
        return middle(x), tf.cond(tf.reduce_sum(x) > 0, lambda: inner(x), lambda: x)

    gd, inputs, outputs = _concrete_graph(outer, tf.TensorSpec([2], tf.float32))
    r = rng(3)
    runs = [{inputs[0]: f32(r, 2) + 1.0}, {inputs[0]: f32(r, 2) - 1.0}]
    return gd, runs, outputs


def frozen_lowered():
    """A tf.function with a variable, frozen with lower_control_flow=True: functional ops become TF1 dataflow."""
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    scale = tf.Variable(1.25)

    def fn(x):
        a, b = _while_cond_case(x * scale)
        return a + b

    concrete = tf.function(fn).get_concrete_function(tf.TensorSpec([], tf.float32))
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=True)
    gd = frozen.graph.as_graph_def()
    inputs = [t.name for t in frozen.graph.inputs]
    runs = [{inputs[0]: np.float32(v)} for v in (1.5, -2.5, 9.0)]
    return gd, runs, [t.name for t in frozen.graph.outputs]


# ----------------------------------------------------------------------------- TensorLists and TensorArrays
def _tensor_lists(x):
    _, a = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 1.5), [tf.constant(0), x[0]])
    mapped = tf.map_fn(lambda v: v * v + a, x)
    scanned = tf.scan(lambda acc, v: acc * 0.5 + v, x, initializer=0.0)
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[])
    for k in tf.range(tf.shape(x)[0]):
        ta = ta.write(k, x[k] * tf.cast(k, tf.float32))
    grown = tf.TensorArray(tf.float32, size=2, element_shape=[2])
    grown = grown.scatter([1, 0], tf.reshape(x[:4], [2, 2]))
    return mapped, scanned, ta.stack(), grown.gather([0, 1]), grown.concat(), ta.size()


def fn_tensor_lists():
    """tf.function with map_fn, scan and tf.TensorArray (TF2: TensorList ops inside While bodies)."""
    gd, inputs, outputs = _concrete_graph(_tensor_lists, tf.TensorSpec([6], tf.float32))
    r = rng(4)
    return gd, [{inputs[0]: f32(r, 6)}, {inputs[0]: f32(r, 6) * 3}], outputs


def v1_tensor_array():
    """TF1 tf.TensorArray in a TF1 while loop: TensorArrayV3 with write, read, stack, gather, concat, split, size."""
    g = tf.Graph()
    with g.as_default(), control_flow_v1():
        x = tf1.placeholder(tf.float32, [5, 2], name="x")
        n = tf.shape(x)[0]
        inputs = tf1.TensorArray(tf.float32, size=n, element_shape=[2]).unstack(x)
        out = tf1.TensorArray(tf.float32, size=n, element_shape=[2], clear_after_read=False)

        def body(i, acc, ta):
            acc = acc * 0.5 + inputs.read(i)
            return i + 1, acc, ta.write(i, acc)

        _, last, out = tf1.while_loop(lambda i, a, t: i < n, body, [tf.constant(0), tf.zeros([2]), out])
        tf.identity(out.stack(), name="stacked")
        tf.identity(out.gather([4, 0]), name="gathered")
        tf.identity(out.concat(), name="concat")
        split = tf1.TensorArray(tf.float32, size=2, infer_shape=False).split(tf.reshape(x, [-1]), [3, 7])
        tf.identity(split.read(1), name="split_read")
        tf.identity(out.size(), name="size")
        tf.identity(last, name="last")
    r = rng(5)
    return g.as_graph_def(), [{"x:0": f32(r, 5, 2)}], ["stacked:0", "gathered:0", "concat:0", "split_read:0",
                                                      "size:0", "last:0"]


def greedy_decode():
    """A greedy decoding loop: embed, GRU-like step, argmax, stop at EOS or a length limit (dynamic TensorArray)."""
    r = rng(6)
    vocab, dim = 7, 5
    emb, w, u = (tf.constant(f32(r, *s)) for s in ((vocab, dim), (dim, dim), (dim, vocab)))

    def decode(state, start):
        def cond(t, token, h, ta):
            return tf.logical_and(t < 12, tf.not_equal(token, 0))

        def body(t, token, h, ta):
            h = tf.tanh(tf.matmul(tf.expand_dims(tf.gather(emb, token), 0), w) + h)
            nxt = tf.cast(tf.argmax(tf.matmul(h, u)[0]), tf.int32)
            return t + 1, nxt, h, ta.write(t, nxt)

        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])
        steps, _, h, ta = tf.while_loop(cond, body, [0, start, state, ta])
        return ta.stack(), steps, h

    gd, inputs, outputs = _concrete_graph(decode, tf.TensorSpec([1, dim], tf.float32), tf.TensorSpec([], tf.int32))
    runs = [{inputs[0]: f32(r, 1, dim), inputs[1]: np.int32(k)} for k in (3, 5, 1)]
    return gd, runs, outputs


# ----------------------------------------------------------------------------- Keras RNNs
def _keras(layer_fn, lower: bool, batch: int = 2, steps: int = 7, features: int = 3):
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    tf.keras.utils.set_random_seed(0)
    inp = tf.keras.Input((steps, features), batch_size=batch)
    model = tf.keras.Model(inp, layer_fn()(inp))
    concrete = tf.function(lambda x: model(x)).get_concrete_function(tf.TensorSpec([batch, steps, features]))
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
    gd = frozen.graph.as_graph_def()
    r = rng(7)
    runs = [{frozen.graph.inputs[0].name: f32(r, batch, steps, features)} for _ in range(2)]
    return gd, runs, [t.name for t in frozen.graph.outputs]


def _lstm():
    return tf.keras.layers.LSTM(6, return_sequences=True)


def _gru():
    return tf.keras.layers.GRU(5, return_state=True)


def _bidirectional():
    return tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4))


def keras_lstm_functional():
    """Keras LSTM (return_sequences), variables frozen, control flow left functional (While + library)."""
    return _keras(_lstm, lower=False)


def keras_lstm_frozen():
    """The same LSTM frozen with lower_control_flow=True: a TF1 dataflow loop."""
    return _keras(_lstm, lower=True)


def keras_gru_functional():
    return _keras(_gru, lower=False)


def keras_gru_frozen():
    return _keras(_gru, lower=True)


def keras_bidirectional_functional():
    return _keras(_bidirectional, lower=False)


def keras_bidirectional_frozen():
    return _keras(_bidirectional, lower=True)


def keras_rnn_saved_model(kind: str, path: str, batch: int = 2, steps: int = 5, features: int = 3):
    """A Keras RNN exported unfrozen (``model.export``: resource variables read inside the While body, the body
    and cond in the library); returns (feeds, TF's outputs) for its ``serve`` signature.  Used live only."""
    tf.keras.utils.set_random_seed(0)
    layer = {"lstm": _lstm, "gru": _gru, "bidirectional": _bidirectional}[kind]
    inp = tf.keras.Input((steps, features))
    outputs = layer()(inp)
    model = tf.keras.Model(inp, outputs)
    model.export(path, verbose=False)
    x = f32(rng(11), batch, steps, features)
    served = tf.saved_model.load(path).signatures["serve"](tf.constant(x))
    return {model.inputs[0].name: x}, {k: v.numpy() for k, v in served.items()}


CASES = ["v1_while_simple", "v1_nested", "v1_conds", "v1_while_shapes", "fn_while_cond_case", "fn_nested_calls",
         "frozen_lowered", "fn_tensor_lists", "v1_tensor_array", "greedy_decode", "keras_lstm_functional",
         "keras_lstm_frozen", "keras_gru_functional", "keras_gru_frozen", "keras_bidirectional_functional",
         "keras_bidirectional_frozen"]


def run_in_tf(graph_def, runs: list[dict], fetches: list[str]) -> list[list[np.ndarray]]:
    """TF's values of ``fetches`` for each run's feeds (graph imported into a fresh tf.Graph)."""
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with tf1.Session(graph=g) as sess:
        return [[np.asarray(v) for v in sess.run(fetches, feeds)] for feeds in runs]


def record(name: str) -> dict:
    graph_def, runs, fetches = globals()[name]()
    results = run_in_tf(graph_def, runs, fetches)
    with open(os.path.join(OUT, f"{name}.pb"), "wb") as f:
        f.write(graph_def.SerializeToString(deterministic=True))
    arrays = {}
    for r, (feeds, outs) in enumerate(zip(runs, results)):
        for key, value in feeds.items():
            arrays[f"run{r}/feed/{key}"] = np.asarray(value)
        for k, value in enumerate(outs):
            arrays[f"run{r}/out{k}"] = value
    np.savez_compressed(os.path.join(OUT, f"{name}.npz"), **arrays)
    return {"runs": len(runs), "fetches": fetches, "feeds": sorted(runs[0]) if runs else []}


def record_programs() -> None:
    """TF's values or errors for the raw TensorList/TensorArray programs of tests/control_flow/raw_programs.py."""
    import re

    from tests.control_flow._raw_programs import outcome, run_tf
    from tests.control_flow.raw_programs import LIST_PROGRAMS, TENSOR_ARRAY_PROGRAMS

    arrays, errors = {}, {}
    for name, (program, fetch) in {**LIST_PROGRAMS, **TENSOR_ARRAY_PROGRAMS}.items():
        status, value = outcome(run_tf, program, fetch)
        if status == "ok":
            for k, v in enumerate(value):
                arrays[f"{name}/{k}"] = v
        else:
            message = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", value[1])
            errors[name] = [value[0], re.sub(r"\s*\[Op:\w+\]( name: )?$", "", message)]
    np.savez_compressed(os.path.join(OUT, "raw_programs.npz"), **arrays)
    with open(os.path.join(OUT, "raw_programs_errors.json"), "w") as f:
        json.dump(errors, f, indent=1, sort_keys=True)


def main(names: list[str]) -> None:
    os.makedirs(OUT, exist_ok=True)
    if names == ["programs"]:
        record_programs()
        return
    path = os.path.join(OUT, "manifest.json")
    manifest = json.load(open(path)) if os.path.exists(path) else {}
    for name in names or CASES:
        manifest[name] = record(name)
        print(name, manifest[name]["fetches"])
    with open(path, "w") as f:
        json.dump({k: manifest[k] for k in sorted(manifest)}, f, indent=1)
    if not names:
        record_programs()


if __name__ == "__main__":
    main(sys.argv[1:])
