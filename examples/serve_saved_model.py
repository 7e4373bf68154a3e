"""Serve a TF SavedModel over HTTP from a process where TensorFlow cannot be imported.

The REST shape is TF Serving's: ``POST /v1/models/<name>:predict`` with ``{"instances": [...]}`` (row
format) or ``{"inputs": {...}}`` (columnar), answered with ``{"predictions": ...}`` / ``{"outputs": ...}``;
``GET /v1/models/<name>`` describes the signature.  Without ``--model``, a small Keras CNN is exported by
TensorFlow in a child process (the only place TF runs), then served here and asked once; ``--forever``
keeps serving.

    python examples/serve_saved_model.py                          # export, serve, ask, compare with TF
    python examples/serve_saved_model.py --model DIR --port 8501 --forever
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

sys.modules["tensorflow"] = None  # type: ignore[assignment]  (this process serves without TF: importing it fails)

from tfops_py import saved_model  # noqa: E402

_EXPORT = """
import json, sys
sys.path.insert(0, {tools!r})
import make_saved_models
feeds, want = make_saved_models.keras_cnn({path!r})["serve"]
lists = lambda d: {{k: v.tolist() for k, v in d.items()}}
print(json.dumps({{"inputs": lists(feeds), "outputs": lists(want)}}))
"""


def export_example_model(path: str) -> dict[str, Any]:
    """Export the Keras CNN with TensorFlow in a child process; returns its test input and TF's outputs."""
    tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0"}
    proc = subprocess.run([sys.executable, "-c", _EXPORT.format(tools=tools, path=path)], capture_output=True,
                          text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"exporting the example model needs TensorFlow in the child process:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def make_handler(model: saved_model.LoadedModel, name: str) -> type[BaseHTTPRequestHandler]:
    signature = model.signatures.get("serving_default") or next(iter(model.signatures.values()))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.rstrip("/") != f"/v1/models/{name}":
                return self._reply(404, {"error": f"no model at {self.path}"})
            spec = {k: {"dtype": d.short_name, "shape": s} for k, (d, s) in signature.inputs.items()}
            self._reply(200, {"model": name, "signature": signature.name, "inputs": spec,
                              "outputs": sorted(signature.outputs)})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != f"/v1/models/{name}:predict":
                return self._reply(404, {"error": f"no model at {self.path}"})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if "instances" in body:  # row format: one input, or a dict per instance
                    rows = body["instances"]
                    feeds = ({k: [r[k] for r in rows] for k in signature.inputs} if rows and isinstance(rows[0], dict)
                             else {next(iter(signature.inputs)): rows})
                else:
                    feeds = body["inputs"] if isinstance(body["inputs"], dict) else \
                        {next(iter(signature.inputs)): body["inputs"]}
                out = signature(feeds)
            except Exception as e:  # a bad request is the client's error, reported as TF Serving does
                return self._reply(400, {"error": f"{type(e).__name__}: {e}"})
            key = "predictions" if "instances" in body else "outputs"
            values = {k: np.asarray(v).tolist() for k, v in out.items()}
            self._reply(200, {key: next(iter(values.values())) if len(values) == 1 else values})

        def _reply(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the example prints what matters
            pass

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", help="a SavedModel directory (default: export a small Keras CNN with TF)")
    parser.add_argument("--name", default="default")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--forever", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        expected = None
        path = args.model
        if path is None:
            path = os.path.join(tmp, "keras_cnn")
            expected = export_example_model(path)
        model = saved_model.load(path)
        server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(model, args.name))
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/models/{args.name}"
        print(f"serving {path} at {url} (TensorFlow importable here: {_tf_importable()})")
        if args.forever:
            server.serve_forever()
            return
        threading.Thread(target=server.serve_forever, daemon=True).start()
        with urllib.request.urlopen(url) as r:
            print("metadata:", json.loads(r.read()))
        if expected is not None:
            rows = next(iter(expected["inputs"].values()))
            request = urllib.request.Request(url + ":predict", json.dumps({"instances": rows}).encode(),
                                             {"Content-Type": "application/json"})
            with urllib.request.urlopen(request) as r:
                got = np.asarray(json.loads(r.read())["predictions"])
            want = np.asarray(next(iter(expected["outputs"].values())))
            print("predictions:", np.round(got, 4).tolist())
            print(f"largest difference from TF's outputs: {np.abs(got - want).max():.2e}")
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                raise SystemExit("the served model disagrees with TensorFlow")
        server.shutdown()


def _tf_importable() -> bool:
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
