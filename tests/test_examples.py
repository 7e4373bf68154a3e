"""Every script in examples/ runs and exits 0 (what a newcomer runs first must work)."""
from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

EXAMPLES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "examples", "*.py")))


# train_cnn.py has its own test below (fewer steps, and its outputs checked)
QUICK = [p for p in EXAMPLES if not p.endswith("train_cnn.py")]


@pytest.mark.parametrize("path", QUICK, ids=[os.path.basename(p) for p in QUICK])
def test_example_runs(path, tmp_path):
    # in a scratch directory: examples write their outputs (plots, TensorBoard runs) under the cwd
    proc = subprocess.run([sys.executable, os.path.abspath(path)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
                              os.path.abspath(__file__)))))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip(), "examples should show what they did"


def test_training_example_reports_held_out_accuracy_plot_tensorboard_files_and_checkpoint(tmp_path):
    path = [p for p in EXAMPLES if p.endswith("train_cnn.py")][0]
    proc = subprocess.run([sys.executable, os.path.abspath(path), "--steps", "100", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    accuracy = float(proc.stdout.split("test accuracy ")[1].split()[0])
    assert accuracy > 0.8, proc.stdout
    assert (tmp_path / "training.png").stat().st_size > 10_000
    assert list(tmp_path.glob("events.out.tfevents.*"))
    from tfops_py.checkpoint import load_checkpoint

    shapes = load_checkpoint(str(tmp_path / "model.ckpt")).get_variable_to_shape_map()
    assert shapes["dense/weights"] == [256, 10] and set(shapes) == {"conv/filter", "conv/bias", "dense/weights",
                                                                     "dense/bias"}


def test_quickstart_prints_tf_answer():
    path = [p for p in EXAMPLES if p.endswith("quickstart.py")][0]
    out = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120).stdout
    assert "[[4.0, 8.0], [3.0, 5.0]]" in out
