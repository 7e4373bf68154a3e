"""The strings family beyond the conformance cases: a text-classification graph exported by TF, hashes
bit-exact on thousands of random strings, the host rule on array backends, hostile inputs."""
from __future__ import annotations

import time

import numpy as np
import pytest

from tests.backends import BACKENDS
from tfops_py import ClientSession, Scope, ops
from tfops_py.errors import InvalidArgumentError
from tfops_py.graphdef import import_graph_def


def _sentences() -> np.ndarray:
    items = ["The quick brown fox!", "", "  Jumps, over... the LAZY dog?", "caf\u00e9 \u00dcBER na\u00efve",
             "unknown-words everywhere", "the the the", "\u65e5\u672c\u8a9e \U0001f600 fox"]
    out = np.empty(len(items), dtype=object)
    out[:] = [s.encode() for s in items]
    return out


def _text_classifier_graph_def():
    """TextVectorization-style preprocessing and a bag-of-embeddings classifier, built by TF (graph mode)."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    vocab = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "caf\u00e9"]
    oov_buckets, dim, classes = 5, 8, 3
    graph = tf.Graph()
    with graph.as_default():
        text = tf.compat.v1.placeholder(tf.string, [None], name="text")
        lowered = tf.strings.lower(text, encoding="utf-8")
        cleaned = tf.strings.regex_replace(lowered, r"[[:punct:]]", "")
        split = tf.raw_ops.StringSplitV2(input=cleaned, sep="")
        table = tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(vocab, tf.range(len(vocab), dtype=tf.int64)), oov_buckets)
        ids = table.lookup(split.values)
        hashed = tf.strings.to_hash_bucket_fast(split.values, 100)
        embedding = tf.constant(rng.standard_normal((len(vocab) + oov_buckets, dim)).astype(np.float32))
        hash_embedding = tf.constant(rng.standard_normal((100, dim)).astype(np.float32))
        vectors = tf.gather(embedding, ids) + tf.gather(hash_embedding, hashed)
        rows = split.indices[:, 0]
        n = tf.size(text)
        summed = tf.math.unsorted_segment_sum(vectors, rows, n)
        counts = tf.math.unsorted_segment_sum(tf.ones_like(rows, tf.float32), rows, n)
        mean = summed / tf.maximum(counts, 1.0)[:, None]
        weights = tf.constant(rng.standard_normal((dim, classes)).astype(np.float32))
        tf.nn.softmax(tf.matmul(mean, weights), name="probabilities")
        tf.identity(tf.strings.length(cleaned, unit="UTF8_CHAR"), name="lengths")
        tf.compat.v1.tables_initializer(name="init_tables")
    with tf.compat.v1.Session(graph=graph) as sess:
        sess.run("init_tables")
        expected = sess.run(["probabilities:0", "lengths:0"], {"text:0": _sentences()})
    return graph.as_graph_def().SerializeToString(), expected


@pytest.mark.tf
@pytest.mark.parametrize("backend", BACKENDS)
def test_text_classifier_exported_by_tf_runs_here(backend):
    graph_def, (probabilities, lengths) = _text_classifier_graph_def()
    root = Scope.NewRootScope()
    imported = import_graph_def(root, graph_def)
    sess = ClientSession(root, backend=backend)
    sess.Run({}, [], [imported["init_tables"]])
    text = imported["text"]
    ours = sess.Run({text: _sentences()}, [imported["probabilities:0"], imported["lengths:0"]])
    np.testing.assert_allclose(np.asarray(ours[0]), probabilities, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(ours[1]), lengths)


@pytest.mark.tf
def test_hashes_are_tf_exact_on_random_bytes():
    import tensorflow as tf

    rng = np.random.default_rng(7)
    data = np.empty(3000, dtype=object)
    data[:] = [rng.integers(0, 256, rng.integers(0, 90)).astype(np.uint8).tobytes() for _ in range(data.size)]
    root = Scope.NewRootScope()
    c = ops.Const(root, data)
    big = 2**63 - 1
    ours = ClientSession(root).Run([ops.StringToHashBucket(root, c, big), ops.StringToHashBucketFast(root, c, big),
                                    ops.StringToHashBucketStrong(root, c, big, [2**40 + 3, -9]),
                                    ops.Fingerprint(root, ops.Reshape(root, c, [100, 30]), "farmhash64")])
    t = tf.constant(data)
    raw = tf.raw_ops
    theirs = [raw.StringToHashBucket(string_tensor=t, num_buckets=big),
              raw.StringToHashBucketFast(input=t, num_buckets=big),
              raw.StringToHashBucketStrong(input=t, num_buckets=big, key=[2**40 + 3, -9]),
              raw.Fingerprint(data=tf.reshape(t, [100, 30]), method="farmhash64")]
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), b.numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_host_kernels_feed_device_ops(backend):
    """Hash buckets are computed on the host and gathered from an embedding on the session's device."""
    root = Scope.NewRootScope()
    words = ops.Const(root, ["a", "b", "a"])
    table = ops.Const(root, np.arange(20, dtype=np.float32).reshape(10, 2))
    ids = ops.StringToHashBucketFast(root, words, 10)
    rows = ops.GatherV2(root, table, ids, 0)
    got_ids, got_rows = ClientSession(root, backend=backend).Run([ids, rows])
    if backend != "numpy":
        assert not isinstance(got_rows, np.ndarray)  # stayed on the device
    ids_np = np.asarray(got_ids)
    assert ids_np[0] == ids_np[2] and np.asarray(got_rows).tolist() == [[2 * i, 2 * i + 1] for i in ids_np]


def test_regexes_stay_linear_on_catastrophic_patterns():
    """RE2 has no backtracking: a pattern that hangs backtracking engines returns at once."""
    root = Scope.NewRootScope()
    text = ops.Const(root, ["a" * 20000 + "!"])
    start = time.perf_counter()
    found, replaced = ClientSession(root).Run([ops.RegexFullMatch(root, text, "(a*)*b"),
                                               ops.RegexReplace(root, text, "(a|aa)*c", "x")])
    assert time.perf_counter() - start < 5
    assert found.tolist() == [False] and replaced.tolist() == [b"a" * 20000 + b"!"]


@pytest.mark.parametrize("pattern, reason", [("(", "missing \\): \\("), ("a{1001}", "bad repetition operator"),
                                             ("\\8", "invalid escape sequence")])
def test_patterns_re2_rejects(pattern, reason):
    root = Scope.NewRootScope()
    node = ops.RegexReplace(root.WithOpName("clean"), ops.Const(root, ["a"]), pattern, "")
    with pytest.raises(InvalidArgumentError, match="Invalid pattern: .*, error: ") as info:
        ClientSession(root).Run([node])
    assert "clean" in str(info.value)


def test_utf8_case_mapping_reads_bad_bytes_as_replacement_characters():
    root = Scope.NewRootScope()
    out = ClientSession(root).Run([ops.StringUpper(root, ops.Const(root, [b"\xffa\xc3"]),
                                                   ops.StringUpper.Encoding("utf-8"))])[0]
    assert out.tolist() == ["\ufffdA\ufffd".encode()]


def test_substr_positions_far_out_of_range():
    root = Scope.NewRootScope()
    node = ops.Substr(root, ops.Const(root, ["abc"]), ops.Const(root, np.array([2**62], np.int64)),
                      ops.Const(root, np.array([2**62], np.int64)))
    with pytest.raises(InvalidArgumentError, match="pos 4611686018427387904 out of range for string b'abc' at index 0"):
        ClientSession(root).Run([node])
