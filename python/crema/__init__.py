"""Crema from Python, with pycaffe's names: `import crema as caffe` runs code
written for Caffe's Python interface.

  net = crema.Net("deploy.prototxt", "weights.caffemodel", crema.TEST)
  net.blobs["data"].data[...] = images
  probabilities = net.forward()["prob"]

  solver = crema.get_solver("solver.prototxt")
  solver.step(100)          # trains without holding the GIL
"""
from ._crema import (TRAIN, TEST, Blob, Error, Net, Solver, SGDSolver, NesterovSolver,
                     AdaGradSolver, RMSPropSolver, AdaDeltaSolver, AdamSolver, get_solver,
                     export_onnx, init_log, layer_type_list, set_device, set_mode_cpu,
                     set_mode_gpu, set_random_seed)
__version__ = "0.1.0"

from . import pycaffe  # noqa: F401  (adds blobs, params, forward... to Net)
from .layer import Layer
from . import proto
from . import io
from . import detection
from .net_spec import NetSpec, layers, params, to_proto

__all__ = [
    "TRAIN", "TEST", "Blob", "Error", "Net", "Solver", "SGDSolver", "NesterovSolver",
    "AdaGradSolver", "RMSPropSolver", "AdaDeltaSolver", "AdamSolver", "get_solver",
    "export_onnx", "init_log", "layer_type_list", "set_device", "set_mode_cpu",
    "set_mode_gpu", "set_random_seed", "Layer", "proto", "io", "detection", "draw", "NetSpec",
    "layers", "params", "to_proto",
]


def __getattr__(name):
    # crema.draw is imported on first use: imported here, it would already be
    # in sys.modules when run as `python3 -m crema.draw`, which then warns.
    if name == "draw":
        import importlib
        return importlib.import_module(".draw", __name__)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
