"""Caffe's name for the schema module: the same messages as crema_pb2.

Code written for Caffe imports `caffe_pb2`; Crema's schema keeps Caffe's
message names and field numbers, so the one module serves both names.
"""
from .crema_pb2 import *  # noqa: F401,F403
from .crema_pb2 import DESCRIPTOR  # noqa: F401
