"""Coordinate maps between the blobs of a NetSpec graph (pycaffe's
caffe.coord_map), for aligning the outputs of a fully convolutional net
with its input: `crop(top_from, top_to)` returns the Crop layer that cuts
top_from to top_to's grid.

A map is a triple (axis, a, b): a coordinate x of one blob lies at a * x + b
in the other, along the spatial axes after `axis` (a and b are arrays, one
entry per spatial axis, or scalars that hold for all). A layer's map takes
its bottom's coordinates to its top's; axis None means the layer works
pointwise and fits any axis. The maps are exact for the centres of the
receptive fields: a convolution of kernel k, stride s and pad p puts input
pixel x at output (x + p - (k - 1) / 2) / s.
"""
import numpy as np

from .net_spec import layers as L

# Layers whose output pixel i depends on input pixel i only.
PASS_THROUGH_LAYERS = frozenset([
    'AbsVal', 'BatchNorm', 'Bias', 'BNLL', 'Clip', 'Dropout', 'Eltwise', 'ELU', 'Exp',
    'GELU', 'Log', 'LRN', 'MVN', 'Power', 'PReLU', 'ReLU', 'ReLU6', 'Scale', 'Sigmoid',
    'Split', 'Swish', 'TanH', 'Threshold'])

# Per-axis fields and their legacy 2-D spellings (field_h, field_w).
_LEGACY_2D = {'kernel_size': ('kernel_h', 'kernel_w'), 'stride': ('stride_h', 'stride_w'),
              'pad': ('pad_h', 'pad_w')}


class UndefinedMapException(Exception):
    """A layer with no coordinate map (a fully connected layer, global pooling)."""


class AxisMismatchException(Exception):
    """Two maps along different axes cannot be composed."""


def _layer_params(fn, message):
    """The keywords of a NetSpec layer call: those given as message=dict(...)
    and those given directly (a direct one wins, as net_spec applies it last)."""
    params = dict(fn.params.get(message, {}))
    params.update((k, v) for k, v in fn.params.items() if k != message)
    return params


def _per_axis(params, field, default):
    """A per-axis field as an array: the legacy _h/_w pair when given."""
    legacy = _LEGACY_2D.get(field)
    if legacy and any(name in params for name in legacy):
        value = params.get(field, default)
        fallback = np.array(value, ndmin=1)[0]
        return np.array([params.get(legacy[0], fallback), params.get(legacy[1], fallback)])
    return np.array(params.get(field, default), ndmin=1)


def conv_params(fn):
    """(axis, stride, effective kernel extent, pad) of a Convolution,
    Deconvolution, Pooling or Im2col call; the extent counts the dilation."""
    message = 'pooling_param' if fn.type_name == 'Pooling' else 'convolution_param'
    params = _layer_params(fn, message)
    if params.get('global_pooling'):
        raise UndefinedMapException
    if not any(name in params for name in ('kernel_size', 'kernel_h', 'kernel_w')):
        raise ValueError('%s layer has no kernel_size: no coordinate map' % fn.type_name)
    kernel = _per_axis(params, 'kernel_size', 1)
    dilation = np.array(params.get('dilation', 1), ndmin=1)
    return (params.get('axis', 1), _per_axis(params, 'stride', 1),
            (kernel - 1) * dilation + 1, _per_axis(params, 'pad', 0))


def crop_params(fn):
    """(axis, offset) of a Crop call; Crop's defaults are axis 2 and offset 0."""
    params = _layer_params(fn, 'crop_param')
    return params.get('axis', 2), np.array(params.get('offset', 0), ndmin=1)


def coord_map(fn):
    """The map (axis, a, b) of one layer call, from its bottom to its top.
    Raises UndefinedMapException for a layer that has none."""
    if fn.type_name in ('Convolution', 'Pooling', 'Im2col'):
        axis, stride, extent, pad = conv_params(fn)
        return axis, 1 / stride, (pad - (extent - 1) / 2) / stride
    if fn.type_name == 'Deconvolution':
        axis, stride, extent, pad = conv_params(fn)
        return axis, stride, (extent - 1) / 2 - pad
    if fn.type_name in PASS_THROUGH_LAYERS:
        return None, 1, 0
    if fn.type_name == 'Crop':
        axis, offset = crop_params(fn)
        # Crop names its first cropped axis; a map names the axis before.
        return axis - 1, 1, -offset
    raise UndefinedMapException


def compose(base_map, next_map):
    """The map of next_map followed by base_map (base after next)."""
    axis_base, a_base, b_base = base_map
    axis_next, a_next, b_next = next_map
    if axis_base is None:
        axis = axis_next
    elif axis_next is None or axis_base == axis_next:
        axis = axis_base
    else:
        raise AxisMismatchException
    return axis, a_base * a_next, a_base * b_next + b_base


def inverse(coord_map):
    """The map that undoes coord_map."""
    axis, a, b = coord_map
    return axis, 1 / a, -b / a


_IDENTITY = (None, 1, 0)
_ROUNDING = 1e-6


def _spatial_bottoms(top):
    """The bottoms whose grid a top's layer maps: only the cropped one of a
    Crop (its second bottom gives a size, not coordinates)."""
    bottoms = top.fn.inputs
    return bottoms[:1] if top.fn.type_name == 'Crop' else bottoms


def _maps_to_ancestors(top):
    """{ancestor Top: map from the ancestor's coordinates to top's}, walking
    up through layers that have maps (breadth first, nearest first)."""
    maps = {top: _IDENTITY}
    frontier = [top]
    while frontier:
        current = frontier.pop(0)
        try:
            layer_map = coord_map(current.fn)
        except UndefinedMapException:
            continue
        for bottom in _spatial_bottoms(current):
            if bottom not in maps:
                maps[bottom] = compose(maps[current], layer_map)
                frontier.append(bottom)
    return maps


def coord_map_from_to(top_from, top_to):
    """The map (axis, a, b) from top_from's coordinates to top_to's, through
    their nearest common ancestor. Raises RuntimeError when no chain of
    mapped layers joins them."""
    from_maps = _maps_to_ancestors(top_from)
    # to_maps lists top_to's ancestors nearest first.
    for ancestor, to_map in _maps_to_ancestors(top_to).items():
        if ancestor in from_maps:
            return compose(to_map, inverse(from_maps[ancestor]))
    raise RuntimeError('Could not compute map between tops; are they connected by spatial '
                       'layers? (%r and %r share no ancestor through layers with maps)'
                       % (top_from, top_to))


def crop(top_from, top_to):
    """A Crop layer call that cuts top_from to top_to's grid: the offset that
    puts top_to's pixel 0 on top_from's. The map between them must have
    scale 1 and a whole, non-positive shift; otherwise AssertionError (as
    pycaffe raises) names the scale or shift."""
    axis, a, b = coord_map_from_to(top_from, top_to)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    # The maps are sums of quotients: compare within rounding (1/3 * 3).
    if not np.allclose(a, 1, rtol=0, atol=_ROUNDING):
        raise AssertionError('scale mismatch on crop (a = {})'.format(a))
    if not (b <= _ROUNDING).all():
        raise AssertionError('cannot crop negative offset (b = {})'.format(b))
    if not np.allclose(b, np.round(b), rtol=0, atol=_ROUNDING):
        raise AssertionError('cannot crop noninteger offset (b = {})'.format(b))
    return L.Crop(top_from, top_to,
                  crop_param=dict(axis=axis + 1, offset=[int(v) for v in -np.round(b).ravel()]))
