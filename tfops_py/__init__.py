"""tfops_py: build TensorFlow graphs with TF's C++ client API from Python, run them on NumPy or CuPy."""
from __future__ import annotations

from tfops_py import errors, ops
from tfops_py.framework.dtypes import *  # noqa: F401,F403  (DT_* constants, DataType)
from tfops_py.framework import dtypes as _dtypes
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.func_graph import Function
from tfops_py.framework.operation import Input, InputList, NoGradient, Operation, Output, OutputList
from tfops_py.framework.scope import Scope
from tfops_py.framework.status import Status, TF_CHECK_OK
from tfops_py.framework.tensor_shape import PartialTensorShape, TensorShape
from tfops_py.client.run_options import RunMetadata, RunOptions
from tfops_py.client.session import ClientSession
import tfops_py.kernels  # noqa: F401  (registers shape functions and kernels)
from tfops_py.gradients import AddSymbolicGradients, ComputeGradientError  # also registers every gradient

__version__ = "0.1.0"

# Loaded on first use, so importing tfops_py does not load protobuf.
_LAZY = {
    "import_graph_def": "tfops_py.graphdef",
    "write_graph": "tfops_py.graphdef",
    "to_graph_def": "tfops_py.graphdef",
    "visualize": "tfops_py.graphdef",
    "graphdef": "tfops_py",
    "NewSession": "tfops_py.saved_model.session",
    "Session": "tfops_py.saved_model.session",
    "SetDefaultDevice": "tfops_py.graphdef.default_device",
    "SessionOptions": "tfops_py.client.session_options",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tfops_py' has no attribute {name!r}")
    import importlib

    if name == "graphdef":
        return importlib.import_module("tfops_py.graphdef")
    if name == "visualize":
        return importlib.import_module(module).to_dot
    return getattr(importlib.import_module(module), name)

__all__ = ["ClientSession", "DataType", "Function", "Input", "InputList", "NoGradient", "Operation", "Output",
           "OutputList", "PartialTensorShape", "RunMetadata", "RunOptions", "Scope", "Status", "TF_CHECK_OK",
           "TensorShape", "errors", "ops", "AddSymbolicGradients", "ComputeGradientError"]
__all__ += _dtypes.__all__
