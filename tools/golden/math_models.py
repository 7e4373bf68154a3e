"""Record two small models built by TensorFlow as GraphDefs, with TF's outputs, for tests/golden/math_models/.

    python tools/golden/math_models.py        # TensorFlow 2.21 installed

* ``embedding_bag``: bags of ids (a SparseTensor fed as indices/values/shape) looked up in an embedding
  table with ``tf.nn.embedding_lookup_sparse`` (combiners mean and sqrtn, and weighted sum), the per-bag
  segment means of a gathered batch, a dense layer on top: SparseSegmentMean/SqrtN, SegmentMean,
  UnsortedSegmentSum, Unique, GatherV2, MatMul.
* ``top_k_ranking``: user vectors scored against an item table, the top 10 items per user
  (``tf.math.top_k``), ``tf.sort``/``tf.argsort`` of the scores (TopKV2 graphs), ``tf.math.in_top_k``, the
  cumulative share of the sorted scores (Cumsum) and a rank histogram (Bincount).

Each writes ``<name>.pb`` and ``<name>.npz`` (feeds under ``feed:<tensor>``, TF's values under
``fetch:<tensor>``); ``manifest.json`` lists feeds and fetches.  A few tens of KB in all.
"""
from __future__ import annotations

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "math_models")
rng = np.random.default_rng(7)


def embedding_bag():
    table = rng.standard_normal((40, 6)).astype(np.float32)
    dense = rng.standard_normal((18, 3)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        indices = tf.compat.v1.placeholder(tf.int64, [None, 2], name="bag_indices")
        ids = tf.compat.v1.placeholder(tf.int64, [None], name="bag_ids")
        weights = tf.compat.v1.placeholder(tf.float32, [None], name="bag_weights")
        shape = tf.compat.v1.placeholder(tf.int64, [2], name="bag_shape")
        batch_ids = tf.compat.v1.placeholder(tf.int32, [None], name="batch_ids")
        segments = tf.compat.v1.placeholder(tf.int32, [None], name="batch_segments")
        params = tf.constant(table, name="table")
        bags = tf.SparseTensor(indices, ids, shape)
        mean = tf.nn.embedding_lookup_sparse(params, bags, None, combiner="mean", name="bag_mean")
        sqrtn = tf.nn.embedding_lookup_sparse(params, bags, None, combiner="sqrtn", name="bag_sqrtn")
        weighted = tf.nn.embedding_lookup_sparse(params, bags, tf.SparseTensor(indices, weights, shape),
                                                 combiner="sum", name="bag_weighted")
        unique, position = tf.unique(batch_ids, name="unique_ids")
        rows = tf.gather(params, unique)
        per_segment = tf.math.segment_mean(tf.gather(rows, position), segments, name="segment_mean")
        counts = tf.math.unsorted_segment_sum(tf.ones_like(batch_ids, tf.float32), batch_ids, 40, name="id_counts")
        features = tf.concat([mean, sqrtn, weighted], axis=1)
        logits = tf.matmul(features, tf.constant(dense), name="logits")
        probabilities = tf.nn.softmax(logits, name="probabilities")
    bag_rows = np.repeat(np.arange(5), [3, 1, 4, 2, 3])
    within = np.concatenate([np.arange(n) for n in (3, 1, 4, 2, 3)])
    feeds = {"bag_indices:0": np.stack([bag_rows, within], axis=1).astype(np.int64),
             "bag_ids:0": rng.integers(0, 40, bag_rows.size).astype(np.int64),
             "bag_weights:0": rng.uniform(0.1, 2.0, bag_rows.size).astype(np.float32),
             "bag_shape:0": np.array([5, 4], np.int64),
             "batch_ids:0": rng.integers(0, 12, 16).astype(np.int32),
             "batch_segments:0": np.sort(rng.integers(0, 5, 16)).astype(np.int32)}
    fetches = [t.name for t in (mean, sqrtn, weighted, unique, position, per_segment, counts, logits,
                                probabilities)]
    return g, feeds, fetches


def top_k_ranking():
    items = rng.standard_normal((60, 8)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        users = tf.compat.v1.placeholder(tf.float32, [None, 8], name="users")
        targets = tf.compat.v1.placeholder(tf.int32, [None], name="targets")
        scores = tf.matmul(users, tf.constant(items), transpose_b=True, name="scores")
        best, best_items = tf.math.top_k(scores, k=10, name="top10")
        ascending = tf.sort(scores, direction="ASCENDING", name="sorted_scores")
        ranking = tf.argsort(scores, direction="DESCENDING", stable=True, name="ranking")
        hit = tf.math.in_top_k(targets, scores, 5, name="hit_at_5")
        share = tf.math.cumsum(tf.nn.softmax(best), axis=1, name="share")
        histogram = tf.math.bincount(best_items, minlength=60, name="item_histogram")
    feeds = {"users:0": rng.standard_normal((7, 8)).astype(np.float32),
             "targets:0": rng.integers(0, 60, 7).astype(np.int32)}
    fetches = [t.name for t in (best, best_items, ascending, ranking, hit, share, histogram)]
    return g, feeds, fetches


CASES = {"embedding_bag": embedding_bag, "top_k_ranking": top_k_ranking}


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    manifest = {}
    for name, build in CASES.items():
        graph, feeds, fetches = build()
        with tf.compat.v1.Session(graph=graph) as sess:
            values = sess.run(fetches, {graph.get_tensor_by_name(k): v for k, v in feeds.items()})
        with open(os.path.join(OUT, f"{name}.pb"), "wb") as f:
            f.write(graph.as_graph_def().SerializeToString())
        np.savez_compressed(os.path.join(OUT, f"{name}.npz"), **{f"feed:{k}": v for k, v in feeds.items()},
                            **{f"fetch:{k}": v for k, v in zip(fetches, values)})
        manifest[name] = {"doc": build.__doc__ or "", "feeds": list(feeds), "fetches": fetches,
                          "ops": sorted({n.op for n in graph.as_graph_def().node})}
        print(f"{name}: {len(graph.as_graph_def().node)} nodes, ops {manifest[name]['ops']}")
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": manifest}, f, indent=1)


if __name__ == "__main__":
    main()
