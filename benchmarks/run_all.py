"""Run every benchmark in turn (each next to TF in its own process) and stream their tables.

    python benchmarks/run_all.py   # the numbers in docs/performance.md come from this

Each script's output is printed line by line as it is produced (a benchmark can take minutes).
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_streaming(script: str, env: dict[str, str]) -> int:
    """Run one benchmark, echoing its output as it comes (minus TF's oneDNN banner); its exit code."""
    with subprocess.Popen([sys.executable, "-u", script], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "oneDNN" not in line:
                print(line, end="", flush=True)
    return proc.returncode


def main() -> int:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")
    failed = []
    for script in sorted(glob.glob(os.path.join(HERE, "bench_*.py"))):
        print(f"\n== {os.path.basename(script)}", flush=True)
        if run_streaming(script, env):
            failed.append(os.path.basename(script))
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
