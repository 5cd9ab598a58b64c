"""Crema from Python, with pycaffe's names: `import crema as caffe` runs code
written for Caffe's Python interface.

  net = crema.Net("deploy.prototxt", "weights.caffemodel", crema.TEST)
  net.blobs["data"].data[...] = images
  probabilities = net.forward()["prob"]

  solver = crema.get_solver("solver.prototxt")
  solver.step(100)          # trains without holding the GIL
"""
from ._crema import (TRAIN, TEST, Blob, Error, Net, Solver, SGDSolver, NesterovSolver,
                     AdaGradSolver, RMSPropSolver, AdaDeltaSolver, AdamSolver, SGDWSolver,
                     AdamWSolver, NCCL, Timer,
                     get_solver, evaluate_classifier, export_onnx, has_nccl, init_log, layer_type_list, log,
                     set_device, set_mode_cpu, set_mode_gpu, set_multiprocess, set_random_seed,
                     set_solver_count, set_solver_rank, solver_count, solver_rank)
__version__ = "0.1.0"

from . import pycaffe  # noqa: F401  (adds blobs, params, forward... to Net)
from .layer import Layer
from . import proto
from . import io
from . import detection
from .net_spec import NetSpec, layers, params, to_proto
from .classifier import Classifier
from .detector import Detector

__all__ = [
    "TRAIN", "TEST", "Blob", "Error", "Net", "Solver", "SGDSolver", "NesterovSolver",
    "AdaGradSolver", "RMSPropSolver", "AdaDeltaSolver", "AdamSolver", "SGDWSolver",
    "AdamWSolver", "NCCL", "Timer",
    "get_solver", "evaluate_classifier", "export_onnx", "has_nccl", "init_log", "layer_type_list", "log",
    "set_device", "set_mode_cpu", "set_mode_gpu", "set_multiprocess", "set_random_seed",
    "set_solver_count", "set_solver_rank", "solver_count", "solver_rank", "Layer", "proto",
    "io", "detection", "draw", "coord_map", "NetSpec", "layers", "params", "to_proto",
    "Classifier", "Detector",
]


def __getattr__(name):
    # crema.draw is imported on first use: imported here, it would already be
    # in sys.modules when run as `python3 -m crema.draw`, which then warns.
    if name in ("draw", "coord_map"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
