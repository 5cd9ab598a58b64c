"""Crema's `caffe` import name: `import caffe` gives the crema package under
pycaffe's name, so scripts written for Caffe run unchanged.

Every name is crema's (caffe.Net is crema.Net), and every submodule is
crema's under this name: caffe.io, caffe.proto.caffe_pb2, caffe.net_spec,
caffe.draw, caffe.coord_map, caffe.classifier, caffe.detector and the others
are the crema modules of the same names. caffe.__file__ shows which package
answered `import caffe`: this file, beside crema/, when it is Crema's.
"""
import importlib
import importlib.abc
import importlib.util
import sys

import crema
from crema import *  # noqa: F401,F403  (pycaffe's names)
from crema import __all__, __version__  # noqa: F401

TARGET = "crema"


class _CremaModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `import caffe.X.Y` with the module crema.X.Y itself (the same
    object, so a change made through one name shows through the other)."""

    def __init__(self):
        self._own_specs = {}  # by alias name, between create_module and exec_module

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(__name__ + "."):
            return None
        if importlib.util.find_spec(self._target(fullname)) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(self._target(spec.name))
        self._own_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # crema's module ran when it was imported; the import system has
        # just given it this alias's spec: it keeps its own.
        module.__spec__ = self._own_specs.pop(module.__spec__.name)

    @staticmethod
    def _target(name):
        # caffe._caffe, pycaffe's extension, is crema._crema.
        parts = name.split(".")[1:]
        if parts and parts[0] == "_caffe":
            parts[0] = "_crema"
        return ".".join([TARGET] + parts)


if not any(isinstance(finder, _CremaModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _CremaModules())


def __getattr__(name):
    # crema's own lazily imported submodules (draw, coord_map).
    return getattr(crema, name)
