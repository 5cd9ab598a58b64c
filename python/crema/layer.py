"""The base class of Python layers (prototxt `type: "Python"`).

A net that names `python_param { module: "m" layer: "C" }` gets an instance
of class C of module m, made with the layer's LayerParameter (a
crema_pb2.LayerParameter); before setup Crema sets on it:
  param_str  python_param.param_str
  phase      crema.TRAIN or crema.TEST
  blobs      the layer's learnable blobs (blobs.add_blob(*shape) adds one; the
             solver updates them and the net saves them)
Crema then calls setup(bottom, top) once, and reshape(bottom, top),
forward(bottom, top) and backward(top, propagate_down, bottom) as the net
runs; bottom and top are lists of crema.Blob.
"""


class Layer:
    """Subclass it and define setup, reshape, forward and backward."""

    type = "Python"

    def __init__(self, *args, **kwargs):
        pass

    def setup(self, bottom, top):
        """Checks the bottoms and reads param_str (called once)."""

    def reshape(self, bottom, top):
        """Shapes the tops from the bottoms (called before each forward)."""

    def forward(self, bottom, top):
        """Computes top[i].data from bottom[j].data."""
        raise NotImplementedError(type(self).__name__ + ".forward")

    def backward(self, top, propagate_down, bottom):
        """Computes bottom[j].diff (where propagate_down[j]) from top[i].diff."""
