"""Train a small CNN built with the Scope API on scikit-learn's handwritten digits (8x8, 10 classes).

Conv2D -> BiasAdd -> Relu -> MaxPool -> MatMul -> SoftmaxCrossEntropyWithLogits; AddSymbolicGradients
builds the backward graph and ApplyGradientDescent updates the variables.  1,797 images, 80/20 split
held out for testing; a progress bar, a loss/accuracy plot (PNG), TensorBoard event files (the
graph and the training curves: ``tensorboard --logdir runs``), the trained weights in a TF checkpoint
(a SaveV2 node; ``tf.train.load_checkpoint`` reads it), and the test accuracy at the end.

    pip install -e '.[examples]'
    python examples/train_cnn.py [--steps 600] [--out runs/digits]

Under CI (``CI`` set) it runs 150 steps so the suite stays fast.
"""
from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

from tfops_py import DT_FLOAT, DT_INT64, DT_STRING, AddSymbolicGradients, ClientSession, Scope, ops
from tfops_py.checkpoint import load_checkpoint
from tfops_py.summary import FileWriter

BATCH, SIZE, CLASSES, FILTERS = 64, 8, 10, 16


def load_digits(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Images scaled to [0, 1] as NHWC, one-hot labels; a shuffled 80/20 train/test split."""
    from sklearn.datasets import load_digits as sklearn_digits

    pixels, target = sklearn_digits(return_X_y=True)  # (1797, 64) in 0..16, labels 0..9
    x = (np.asarray(pixels) / 16.0).astype(np.float32).reshape(-1, SIZE, SIZE, 1)
    y = np.eye(CLASSES, dtype=np.float32)[np.asarray(target)]
    order = rng.permutation(len(x))
    cut = int(0.8 * len(x))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def build(root: Scope, rng: np.random.Generator) -> dict[str, Any]:
    x = ops.Placeholder(root.WithOpName("images"), DT_FLOAT, ops.Placeholder.Shape([-1, SIZE, SIZE, 1]))
    y = ops.Placeholder(root.WithOpName("labels"), DT_FLOAT, ops.Placeholder.Shape([-1, CLASSES]))
    initial = {
        "conv/filter": rng.normal(scale=0.3, size=(3, 3, 1, FILTERS)).astype(np.float32),
        "conv/bias": np.zeros(FILTERS, np.float32),
        "dense/weights": rng.normal(scale=0.05, size=(4 * 4 * FILTERS, CLASSES)).astype(np.float32),
        "dense/bias": np.zeros(CLASSES, np.float32),
    }
    variables = {n: ops.Variable(root.WithOpName(n), list(v.shape), DT_FLOAT) for n, v in initial.items()}
    inits = [ops.Assign(root.WithOpName(f"{n}/init"), variables[n], v) for n, v in initial.items()]

    conv = ops.Conv2D(root.WithOpName("conv"), x, variables["conv/filter"], [1, 1, 1, 1], "SAME")
    act = ops.Relu(root.WithOpName("relu"), ops.BiasAdd(root, conv, variables["conv/bias"]))
    pool = ops.MaxPool(root.WithOpName("pool"), act, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    flat = ops.Reshape(root.WithOpName("flatten"), pool, [-1, 4 * 4 * FILTERS])
    logits = ops.Add(root.WithOpName("logits"), ops.MatMul(root, flat, variables["dense/weights"]),
                     variables["dense/bias"])
    xent = ops.SoftmaxCrossEntropyWithLogits(root.WithOpName("xent"), logits, y)
    loss = ops.Mean(root.WithOpName("loss"), xent.loss, [0])
    correct = ops.Equal(root, ops.ArgMax(root, logits, 1, output_type=DT_INT64),
                        ops.ArgMax(root, y, 1, output_type=DT_INT64))
    accuracy = ops.Mean(root.WithOpName("accuracy"), ops.Cast(root, correct, DT_FLOAT), [0])

    names = list(variables)
    grads = AddSymbolicGradients(root, [loss], [variables[n] for n in names])
    rate = ops.Const(root.WithOpName("learning_rate"), 0.1)
    train = [ops.ApplyGradientDescent(root.WithOpName(f"{n}/update"), variables[n], rate, g)
             for n, g in zip(names, grads)]
    summaries = ops.MergeSummary(root.WithOpName("summaries"), [
        ops.ScalarSummary(root, "train/loss", loss), ops.ScalarSummary(root, "train/accuracy", accuracy),
        ops.HistogramSummary(root, "dense/weights", variables["dense/weights"])])
    prefix = ops.Placeholder(root.WithOpName("checkpoint_prefix"), DT_STRING, ops.Placeholder.Shape([]))
    save = ops.SaveV2(root.WithOpName("save"), prefix, names, [""] * len(names), [variables[n] for n in names])
    return {"x": x, "y": y, "inits": inits, "train": train, "loss": loss, "accuracy": accuracy,
            "summaries": summaries, "prefix": prefix, "save": save}


def evaluate(session: ClientSession, g: dict[str, Any], x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    loss, acc = session.Run({g["x"]: x, g["y"]: y}, [g["loss"], g["accuracy"]])
    return float(loss), float(acc)


def plot(history: list[tuple[int, float, float, float, float]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, train_loss, test_loss, train_acc, test_acc = (list(c) for c in zip(*history))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(steps, train_loss, label="train")
    left.plot(steps, test_loss, label="test (held out)")
    left.set(title="cross-entropy loss", xlabel="step", yscale="log")
    right.plot(steps, train_acc, label="train")
    right.plot(steps, test_acc, label="test (held out)")
    right.set(title="accuracy", xlabel="step", ylim=(0, 1.02))
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("tfops_py: CNN on scikit-learn digits (NumPy backend)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=150 if os.environ.get("CI") else 600)
    parser.add_argument("--out", default=os.path.join("runs", "digits"), help="plot and TensorBoard files")
    args = parser.parse_args()
    from tqdm import tqdm

    rng = np.random.default_rng(0)
    train_x, train_y, test_x, test_y = load_digits(rng)
    root = Scope.NewRootScope()
    g = build(root, rng)
    session = ClientSession(root)
    session.Run({}, [], g["inits"])

    history = []
    with FileWriter(args.out) as writer, tqdm(range(1, args.steps + 1), desc="training", unit="step") as bar:
        writer.add_graph(root)
        for step in bar:
            idx = rng.integers(0, len(train_x), size=BATCH)
            feeds = {g["x"]: train_x[idx], g["y"]: train_y[idx]}
            outs = session.Run(feeds, [g["loss"], g["summaries"]], g["train"])
            writer.add_summary(outs[1], step)
            if step % 25 == 0 or step == args.steps:
                train_loss, train_acc = evaluate(session, g, train_x, train_y)
                test_loss, test_acc = evaluate(session, g, test_x, test_y)
                writer.add_scalar("test/loss", test_loss, step)
                writer.add_scalar("test/accuracy", test_acc, step)
                history.append((step, train_loss, test_loss, train_acc, test_acc))
                bar.set_postfix(loss=f"{float(outs[0]):.3f}", test_acc=f"{test_acc:.3f}")
    png = os.path.join(args.out, "training.png")
    plot(history, png)
    checkpoint = os.path.join(args.out, "model.ckpt")
    session.Run({g["prefix"]: checkpoint}, [], [g["save"]])
    saved = load_checkpoint(checkpoint).get_variable_to_shape_map()
    final_loss, final_acc = history[-1][2], history[-1][4]
    print(f"test accuracy {final_acc:.3f} (loss {final_loss:.3f}) on {len(test_x)} held-out digits "
          f"after {args.steps} steps")
    print(f"plot: {png}; TensorBoard: tensorboard --logdir {args.out}")
    print(f"checkpoint: {checkpoint} ({', '.join(f'{k} {v}' for k, v in sorted(saved.items()))})")
    assert history[-1][2] < history[0][2], "training did not reduce the held-out loss"


if __name__ == "__main__":
    main()
