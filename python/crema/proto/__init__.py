"""The schema's generated Python module: crema_pb2 (also caffe_pb2, Caffe's name)."""
from . import crema_pb2, caffe_pb2  # noqa: F401
