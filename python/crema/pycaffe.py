"""pycaffe's conveniences on crema.Net: blobs and params by name, forward and
backward that take and return numpy arrays by blob name, whole-dataset
forward_all / forward_backward_all, and MemoryData's set_input_arrays.

The C++ extension gives Net its raw parts (_blobs, _blob_names, _layer_names,
layers, _inputs, _outputs, _top_ids, _bottom_ids, _forward, _backward,
_set_input_arrays); this module adds pycaffe's names on top of them.
"""
from collections import OrderedDict
from itertools import zip_longest

import numpy as np

from ._crema import NCCL, Net, Solver
from .proto import caffe_pb2


def _blobs(self):
    """Blobs by name, in the net's order (an OrderedDict of crema.Blob)."""
    if not hasattr(self, "_blobs_dict"):
        self._blobs_dict = OrderedDict(zip(self._blob_names, self._blobs))
    return self._blobs_dict


def _params(self):
    """Learnable blobs by layer name, for the layers that have some."""
    if not hasattr(self, "_params_dict"):
        self._params_dict = OrderedDict(
            (name, layer.blobs)
            for name, layer in zip(self._layer_names, self.layers)
            if len(layer.blobs) > 0)
    return self._params_dict


def _blob_loss_weights(self):
    """Each blob's weight in the loss, by blob name (0 for blobs that are no loss)."""
    return OrderedDict(zip(self._blob_names, self._blob_loss_weights))


def _layer_dict(self):
    """Layers by name (Python layers as their own objects)."""
    if not hasattr(self, "_layer_dict_cache"):
        self._layer_dict_cache = OrderedDict(zip(self._layer_names, self.layers))
    return self._layer_dict_cache


def _inputs(self):
    return [self._blob_names[i] for i in self._inputs]


def _outputs(self):
    return [self._blob_names[i] for i in self._outputs]


def _names_by_layer(self, ids_of):
    return OrderedDict(
        (name, [self._blob_names[b] for b in ids_of(i)])
        for i, name in enumerate(self._layer_names))


def _top_names(self):
    """Top blob names by layer name."""
    return _names_by_layer(self, self._top_ids)


def _bottom_names(self):
    """Bottom blob names by layer name."""
    return _names_by_layer(self, self._bottom_ids)


def _layer_index(self, name, default):
    if name is None:
        return default
    names = list(self._layer_names)
    if name not in names:
        raise ValueError("no layer named %r in net %r" % (name, self.name))
    return names.index(name)


# pycaffe's own sentences, which scripts match on, begin each message.
_MISMATCH = {"data": "Input blob arguments do not match net inputs.",
             "diff": "Top diff arguments do not match net outputs."}
_NOT_BATCH_SIZED = {"data": "Input is not batch sized", "diff": "Diff is not batch sized"}


def _fill(self, values, allowed, field, what):
    """Copies arrays given by blob name into those blobs' data or diff."""
    unknown = set(values) - set(allowed)
    if unknown:
        raise ValueError("%s %s %s are not among the net's %s %s"
                         % (_MISMATCH[field], what, sorted(unknown), what, allowed))
    for name, array in values.items():
        blob = self.blobs[name]
        if np.shape(array)[0] != blob.shape[0]:
            raise ValueError("%s: %s %r has %d items, the blob's batch is %d"
                             % (_NOT_BATCH_SIZED[field], what, name, np.shape(array)[0],
                                blob.shape[0]))
        getattr(blob, field)[...] = array


def _forward(self, blobs=None, start=None, end=None, **kwargs):
    """Runs layers start..end (names; default all) after copying the inputs
    given as keyword arrays. Returns {blob name: data} for the net's outputs
    (or end's tops) and the extra `blobs` named."""
    blobs = list(blobs or [])
    start_index = _layer_index(self, start, 0)
    end_index = _layer_index(self, end, len(self._layer_names) - 1)
    wanted = set((self.top_names[end] if end is not None else self.outputs) + blobs)
    _fill(self, kwargs, self.inputs, "data", "input blobs")
    self._forward(start_index, end_index)
    return {name: self.blobs[name].data for name in wanted}


def _backward(self, diffs=None, start=None, end=None, **kwargs):
    """Runs the backward pass from layer start down to end (names; default
    all) after copying the top diffs given as keyword arrays. Returns
    {blob name: diff} for the net's inputs (or end's bottoms) and `diffs`."""
    diffs = list(diffs or [])
    start_index = _layer_index(self, start, len(self._layer_names) - 1)
    end_index = _layer_index(self, end, 0)
    wanted = set((self.bottom_names[end] if end is not None else self.inputs) + diffs)
    _fill(self, kwargs, self.outputs, "diff", "output blobs")
    self._backward(start_index, end_index)
    return {name: self.blobs[name].diff for name in wanted}


def _batches(self, arrays):
    """Splits {name: array} into batch-sized pieces, the last padded with zeros."""
    if not arrays:
        return
    num = len(next(iter(arrays.values())))
    batch = next(iter(self.blobs.values())).shape[0]
    for start in range(0, num, batch):
        piece = {}
        for name, array in arrays.items():
            part = np.asarray(array[start:start + batch])
            if len(part) < batch:
                pad = np.zeros((batch - len(part),) + part.shape[1:], dtype=part.dtype)
                part = np.concatenate([part, pad])
            piece[name] = part
        yield piece


def _forward_all(self, blobs=None, **kwargs):
    """Forward over every item of the input arrays, batch by batch. Returns
    {blob name: all items' data}."""
    collected = {name: [] for name in set(self.outputs + list(blobs or []))}
    num = len(next(iter(kwargs.values()))) if kwargs else 0
    for batch in _batches(self, kwargs):
        out = self.forward(blobs=blobs, **batch)
        for name, value in out.items():
            collected[name].extend(value.copy())
    return {name: np.asarray(values[:num] if num else values)
            for name, values in collected.items()}


def _forward_backward_all(self, blobs=None, diffs=None, **kwargs):
    """Forward and backward over every item: keyword arrays name inputs (for
    forward) or outputs (their diffs, for backward). Returns the forward and
    the backward results, each {blob name: all items}."""
    forward_in = {k: v for k, v in kwargs.items() if k in self.inputs}
    backward_in = {k: v for k, v in kwargs.items() if k in self.outputs}
    forward_out = {name: [] for name in set(self.outputs + list(blobs or []))}
    backward_out = {name: [] for name in set(self.inputs + list(diffs or []))}
    pairs = zip_longest(_batches(self, forward_in), _batches(self, backward_in), fillvalue={})
    for fwd, bwd in pairs:
        for name, value in self.forward(blobs=blobs, **fwd).items():
            forward_out[name].extend(value.copy())
        for name, value in self.backward(diffs=diffs, **bwd).items():
            backward_out[name].extend(value.copy())
    num = len(next(iter(kwargs.values()))) if kwargs else None
    return ({k: np.asarray(v[:num]) for k, v in forward_out.items()},
            {k: np.asarray(v[:num]) for k, v in backward_out.items()})


def _set_input_arrays(self, data, labels):
    """Gives a net whose first layer is MemoryData its (N, C, H, W) data and N
    labels (float32 copies are kept alive by the net)."""
    data = np.ascontiguousarray(data, dtype=np.float32)
    labels = np.ascontiguousarray(labels, dtype=np.float32).reshape(-1)
    self._input_arrays = (data, labels)
    self._set_input_arrays(data, labels)


def _after_backward(self, nccl):
    """BVLC's layer-wise reduce hook, for an NCCL object only: the gradients
    of nccl's solver (whose net this must be) are averaged over the group at
    each iteration. Crema averages them all at once when the backward pass
    ends, so this and solver.add_callback(nccl) register the same averaging,
    once however often either is called."""
    if not isinstance(nccl, NCCL):
        raise TypeError("after_backward takes an NCCL object (Crema runs no Python "
                        "callbacks between layers), got %r" % (nccl,))
    if nccl._solver.net is not self:
        raise ValueError("after_backward: this NCCL object was made for another net's solver")
    nccl._attach()


def _solver_param(self):
    """The solver's settings, a caffe_pb2.SolverParameter (a copy: changing it
    changes nothing)."""
    param = caffe_pb2.SolverParameter()
    param.ParseFromString(self._param_string)
    return param


Net.blobs = property(_blobs)
Net.params = property(_params)
Net.layer_dict = property(_layer_dict)
Net.blob_loss_weights = property(_blob_loss_weights)
Net.inputs = property(_inputs)
Net.outputs = property(_outputs)
Net.top_names = property(_top_names)
Net.bottom_names = property(_bottom_names)
Net.forward = _forward
Net.backward = _backward
Net.forward_all = _forward_all
Net.forward_backward_all = _forward_backward_all
Net.set_input_arrays = _set_input_arrays
Net.after_backward = _after_backward
Solver.param = property(_solver_param)
