"""Export Keras application models (weights=None) as frozen GraphDefs for benchmarks and model tests.

    python tools/export_keras_models.py [--dir DIR] [--size 224] [NAME ...]

Writes ``DIR/<name>_<size>.pb`` (input ``x:0``, NHWC float32 with an unknown batch; output
``Identity:0``), by default into ``$TFOPS_MODEL_CACHE`` or ``~/.cache/tfops_py/models``: outside the
repository, never committed.  Weights are Keras's random initialisation with a fixed seed, so runs
are reproducible; an existing file is kept.  Needs TensorFlow (with Keras).
"""
from __future__ import annotations

import argparse
import os
import sys

MODELS = ("ResNet50", "MobileNetV2", "MobileNetV3Large", "EfficientNetB0", "DenseNet121", "InceptionV3",
          "NASNetMobile")
# The input size each application expects by default (NASNetMobile's is fixed at 224 with weights).
DEFAULT_SIZE = {"InceptionV3": 299}


def cache_dir() -> str:
    return os.environ.get("TFOPS_MODEL_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tfops_py",
                                                                "models")


def model_path(name: str, size: int | None = None, directory: str | None = None) -> str:
    size = size or DEFAULT_SIZE.get(name, 224)
    return os.path.join(directory or cache_dir(), f"{name}_{size}.pb")


def export(name: str, size: int | None = None, directory: str | None = None) -> str:
    """The frozen graph's path, writing it first when it is missing."""
    path = model_path(name, size, directory)
    if os.path.exists(path):
        return path
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    size = size or DEFAULT_SIZE.get(name, 224)
    tf.keras.utils.set_random_seed(0)
    app = getattr(tf.keras.applications, name)
    kwargs = {"include_preprocessing": False} if name.startswith("MobileNetV3") else {}
    model = app(weights=None, input_shape=(size, size, 3), **kwargs)
    fn = tf.function(lambda x: model(x, training=False))
    concrete = fn.get_concrete_function(tf.TensorSpec([None, size, size, 3], tf.float32, name="x"))
    frozen = convert_variables_to_constants_v2(concrete)
    graph_def = frozen.graph.as_graph_def()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(graph_def.SerializeToString())
    os.replace(tmp, path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(MODELS))
    parser.add_argument("--dir", default=None)
    parser.add_argument("--size", type=int, default=None, help="input height and width (default: the model's)")
    args = parser.parse_args()
    for name in args.names:
        print(export(name, args.size, args.dir), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
