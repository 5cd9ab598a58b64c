"""Build nets in Python: the NetSpec API of Caffe's pycaffe (``caffe.net_spec``).

A net is written as calls of layer functions on the tops they consume::

    from crema import layers as L, params as P, NetSpec

    n = NetSpec()
    n.data, n.label = L.Data(source='train_lmdb', backend=P.Data.LMDB,
                             batch_size=64, ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20,
                            weight_filler=dict(type='xavier'))
    n.loss = L.SoftmaxWithLoss(n.conv1, n.label)
    print(n.to_proto())          # prototxt text

``L.<Type>(*bottoms, **kwargs)`` makes a layer of type ``<Type>``. As in
pycaffe, a keyword naming a field of the layer type's own parameter message
(``convolution_param`` for Convolution and Deconvolution, ``data_param`` for
Data, ...) sets that field, and one ending in ``param`` or naming another
field of ``LayerParameter`` (``name``, ``param``, ``include``,
``loss_weight``, ``propagate_down``, ``*_param`` ...) sets the layer's. Two keywords are not fields: ``ntop`` (the
number of tops, default 1; with 0 the call returns the layer itself) and
``in_place`` (the tops reuse the bottoms' names). ``top`` and ``bottom`` are
refused: the graph defines them.

Values follow the schema through the protobuf descriptors, so every layer
type works without per-layer tables: a scalar sets a field (or is appended to
a repeated one), a list fills a repeated field, a dict fills a sub-message
(``weight_filler=dict(type='xavier')``) and a list of dicts fills repeated
messages (``param=[dict(lr_mult=1), dict(lr_mult=2)]``). Enum fields also
accept the value's name as a string.
"""

from collections import Counter, OrderedDict

import numpy as np
from google.protobuf import message as _pb_message
from google.protobuf.descriptor import FieldDescriptor

from .proto import crema_pb2

__all__ = ['layers', 'params', 'NetSpec', 'Top', 'Function', 'to_proto',
           'assign_proto', 'param_name_dict']

_LAYER_DESCRIPTOR = crema_pb2.LayerParameter.DESCRIPTOR

# Layer types that take a parameter message named after another type: the
# C++ layers read these fields, so keywords must land there.
_SHARED_PARAM_FIELDS = {
    'Deconvolution': 'convolution_param',
    'Im2col': 'convolution_param',
    'LSTM': 'recurrent_param',
    'RNN': 'recurrent_param',
}

# Computed from the graph, never from keywords.
_GRAPH_FIELDS = ('top', 'bottom')


def _type_param_fields():
    """Map ``<Type>`` to the LayerParameter field holding ``<Type>Parameter``.

    Scanning the descriptor (rather than converting names) gets the
    irregular ones right: TransformationParameter lives in ``transform_param``,
    LRNParameter in ``lrn_param``, HDF5DataParameter in ``hdf5_data_param``.
    """
    fields = {}
    for field in _LAYER_DESCRIPTOR.fields:
        msg = field.message_type
        if (msg is not None and field.name.endswith('_param')
                and msg.name.endswith('Parameter')):
            # The first field of a type is its layer's (BVLC's relu_param
            # before MobileNet-YOLO's relu6_param, also a ReLUParameter).
            fields.setdefault(msg.name[:-len('Parameter')], field.name)
    fields.update(_SHARED_PARAM_FIELDS)
    return fields


_PARAM_FIELDS = _type_param_fields()


def param_name_dict():
    """Return pycaffe's map from layer type to parameter-field prefix.

    For example ``{'Convolution': 'convolution', 'Transformation':
    'transform', 'Deconvolution': 'convolution', ...}``: the layer type's
    keywords go to the field ``<prefix>_param``.
    """
    return {t: f[:-len('_param')] for t, f in _PARAM_FIELDS.items()}


def _param_field(type_name):
    """Return the name of the ``*_param`` field of layer type ``type_name``, or None."""
    return _PARAM_FIELDS.get(type_name)


# ---------------------------------------------------------------------------
# Assigning Python values to protobuf fields


def _is_sequence(val):
    return isinstance(val, (list, tuple, np.ndarray))


def _coerce_scalar(field, val, path):
    """Turn ``val`` into what protobuf accepts for the scalar ``field``."""
    if isinstance(val, np.generic):
        # protobuf deprecates some numpy scalars (np.bool_) as field values.
        val = val.item()
    if field.enum_type is not None and isinstance(val, str):
        enum_value = field.enum_type.values_by_name.get(val)
        if enum_value is None:
            names = ', '.join(field.enum_type.values_by_name)
            raise ValueError('%s: %r is not a value of enum %s (one of: %s)'
                             % (path, val, field.enum_type.name, names))
        val = enum_value.number
    return val


def _fill_message(msg, val, path):
    """Fill sub-message ``msg`` from a dict (or copy a message of its type)."""
    if isinstance(val, _pb_message.Message):
        if val.DESCRIPTOR is not msg.DESCRIPTOR:
            raise TypeError('%s: expected a %s, got a %s'
                            % (path, msg.DESCRIPTOR.name, val.DESCRIPTOR.name))
        msg.CopyFrom(val)
        return
    if not isinstance(val, dict):
        raise TypeError('%s: field of message type %s needs a dict, got %r'
                        % (path, msg.DESCRIPTOR.name, val))
    # An empty dict still marks an optional sub-message as present.
    msg.SetInParent()
    for key, item in val.items():
        _assign(msg, key, item, '%s.%s' % (path, key))


def _set_scalar(proto, field, val, path):
    val = _coerce_scalar(field, val, path)
    try:
        setattr(proto, field.name, val)
    except (TypeError, ValueError) as err:
        raise type(err)('%s: %s' % (path, err)) from None


def _append_scalar(container, field, val, path):
    val = _coerce_scalar(field, val, path)
    try:
        container.append(val)
    except (TypeError, ValueError) as err:
        raise type(err)('%s: %s' % (path, err)) from None


def _assign(proto, name, val, path):
    field = proto.DESCRIPTOR.fields_by_name.get(name)
    if field is None:
        raise AttributeError('%s: message %s has no field named %r'
                             % (path, proto.DESCRIPTOR.name, name))
    if field.label == FieldDescriptor.LABEL_REPEATED:
        container = getattr(proto, name)
        for i, item in enumerate(val if _is_sequence(val) else [val]):
            item_path = '%s[%d]' % (path, i)
            if field.message_type is not None:
                _fill_message(container.add(), item, item_path)
            else:
                _append_scalar(container, field, item, item_path)
    elif _is_sequence(val):
        raise TypeError('%s: field %s is not repeated; give one value, not %r'
                        % (path, name, val))
    elif field.message_type is not None:
        _fill_message(getattr(proto, name), val, path)
    else:
        _set_scalar(proto, field, val, path)


def assign_proto(proto, name, val):
    """Set field ``name`` of protobuf message ``proto`` from a Python value.

    Scalars set the field; on a repeated field a scalar is appended and a
    list/tuple extends it; a dict fills a sub-message recursively; a list of
    dicts appends one sub-message per dict. Raises AttributeError for a field
    the message lacks and TypeError/ValueError for a value it cannot hold;
    the message names the field path.
    """
    _assign(proto, name, val, name)


# ---------------------------------------------------------------------------
# The graph: Tops, Functions (layers), and their conversion to NetParameter


class Top:
    """One output blob of a layer call: output ``n`` of Function ``fn``."""

    def __init__(self, fn, n):
        self.fn = fn
        self.n = n

    def to_proto(self):
        """Return a NetParameter with every layer this top depends on."""
        return to_proto(self)

    def _to_proto(self, layers, names, autonames):
        return self.fn._to_proto(layers, names, autonames)

    def __repr__(self):
        return '<Top %d of %s layer>' % (self.n, self.fn.type_name)


class Function:
    """One layer call: its type, its input Tops and its keyword parameters.

    The keywords are checked against the schema when the layer is made, so
    a misspelt one fails at the line that wrote it.
    """

    def __init__(self, type_name, inputs, params):
        self.type_name = type_name
        for index, inp in enumerate(inputs):
            if not isinstance(inp, Top):
                # pycaffe's words: scripts match on them.
                raise TypeError('{} input {} is not a Top (type is {})'
                                .format(type_name, index, type(inp)))
        self.inputs = tuple(inputs)
        params = dict(params)
        self.ntop = params.pop('ntop', 1)
        self.in_place = params.pop('in_place', False)
        self.params = params
        if not isinstance(self.ntop, int) or self.ntop < 0:
            raise ValueError('%s: ntop must be an int >= 0, got %r'
                             % (type_name, self.ntop))
        if self.in_place and self.ntop != len(self.inputs):
            raise ValueError('%s: in_place needs as many tops as bottoms '
                             '(%d tops, %d bottoms)'
                             % (type_name, self.ntop, len(self.inputs)))
        self.tops = tuple(Top(self, n) for n in range(self.ntop))
        self._apply_params(crema_pb2.LayerParameter())

    def _target(self, layer, key):
        """Return the message that keyword ``key`` of this layer sets."""
        if key in _GRAPH_FIELDS:
            raise ValueError('%s layer: %r cannot be given as a keyword; '
                             'the net\'s graph defines it'
                             % (self.type_name, key))
        # As pycaffe: a *param keyword is the layer's; any other goes to the
        # type's own parameter message where that has it (Intel's layer-level
        # engine string does not take a Convolution's engine), else to the layer.
        field = _param_field(self.type_name)
        if field is not None and not key.endswith('param'):
            sub = getattr(layer, field)
            if key in sub.DESCRIPTOR.fields_by_name:
                return sub
        if key in _LAYER_DESCRIPTOR.fields_by_name:
            return layer
        where = ('a field of LayerParameter or of %s' % field if field
                 else 'a field of LayerParameter (type %s has no parameter '
                      'message of its own; give e.g. loss_param=dict(...))'
                      % self.type_name)
        raise AttributeError('%s layer has no parameter %r: it is not %s'
                             % (self.type_name, key, where))

    def _apply_params(self, layer):
        for key, val in self.params.items():
            target = self._target(layer, key)
            path = key if target is layer else '%s.%s' % (
                _param_field(self.type_name), key)
            try:
                _assign(target, key, val, path)
            except (AttributeError, TypeError, ValueError) as err:
                raise type(err)('%s layer: %s' % (self.type_name, err)) from None

    def _get_name(self, names, autonames):
        # A layer is named after its first top; a top-less one after its type.
        if self not in names and self.ntop > 0:
            names[self] = self._get_top_name(self.tops[0], names, autonames)
        elif self not in names:
            autonames[self.type_name] += 1
            names[self] = self.type_name + str(autonames[self.type_name])
        return names[self]

    def _get_top_name(self, top, names, autonames):
        if top not in names:
            autonames[top.fn.type_name] += 1
            names[top] = top.fn.type_name + str(autonames[top.fn.type_name])
        return names[top]

    def _to_proto(self, layers, names, autonames):
        """Add this layer, after the layers it depends on, to ``layers``."""
        if self in layers:
            return
        bottom_names = []
        for inp in self.inputs:
            inp._to_proto(layers, names, autonames)
            # The producing layer's actual top: in-place tops keep the
            # bottom's name, not their own.
            bottom_names.append(layers[inp.fn].top[inp.n])
        layer = crema_pb2.LayerParameter()
        layer.type = self.type_name
        layer.bottom.extend(bottom_names)
        if self.in_place:
            layer.top.extend(layer.bottom)
        else:
            for top in self.tops:
                layer.top.append(self._get_top_name(top, names, autonames))
        layer.name = self._get_name(names, autonames)
        # Applied last so that an explicit name= wins over the automatic one.
        self._apply_params(layer)
        layers[self] = layer

    def __repr__(self):
        return '<%s layer, %d tops>' % (self.type_name, self.ntop)


def _function_of(item):
    if isinstance(item, Top):
        return item.fn
    if isinstance(item, Function):
        return item
    raise TypeError('expected a Top or a layer (Function), got %r' % (item,))


def _net_from_layers(layers):
    net = crema_pb2.NetParameter()
    net.layer.extend(layers.values())
    return net


def to_proto(*tops):
    """Return a NetParameter holding every layer that ``tops`` depend on.

    Layers come in topological order; layers and tops get automatic names
    (``Convolution1``, ...) since nothing names them here.
    """
    layers = OrderedDict()
    autonames = Counter()
    for top in tops:
        _function_of(top)._to_proto(layers, {}, autonames)
    return _net_from_layers(layers)


class NetSpec:
    """A net under construction: assigning a Top to an attribute names it.

    ``n.conv1 = L.Convolution(...)`` names the top (and so the layer)
    ``conv1``; ``n['conv1']`` is the same. ``to_proto()`` returns the net.
    """

    def __init__(self):
        super().__setattr__('tops', OrderedDict())

    def __setattr__(self, name, value):
        self.tops[name] = value

    def __getattr__(self, name):
        # Only called for names that are not real attributes.
        try:
            return self.__dict__['tops'][name]
        except KeyError:
            raise AttributeError('NetSpec has no top named %r' % name) from None

    def __setitem__(self, key, value):
        self.tops[key] = value

    def __getitem__(self, key):
        return self.tops[key]

    def __delitem__(self, key):
        del self.tops[key]

    def __contains__(self, key):
        return key in self.tops

    def keys(self):
        """Return the top names, in assignment order."""
        return list(self.tops.keys())

    def vals(self):
        """Return the tops, in assignment order."""
        return list(self.tops.values())

    def update(self, name, value):
        """Assign ``value`` to top name ``name`` (same as ``n[name] = value``)."""
        self.tops[name] = value

    def to_proto(self):
        """Return the net as a NetParameter, layers in topological order.

        A layer is named after the name its (first) top was assigned to;
        tops never assigned get automatic names such as ``Convolution1``.
        """
        names = {top: name for name, top in self.tops.items()}
        autonames = Counter()
        layers = OrderedDict()
        for top in self.tops.values():
            _function_of(top)._to_proto(layers, names, autonames)
        return _net_from_layers(layers)


class Layers:
    """``layers.<Type>(*bottoms, **kwargs)`` makes a layer of type ``<Type>``.

    Returns its Top when it has one, a tuple of Tops when ``ntop > 1`` and
    the layer (Function) itself when ``ntop=0``.
    """

    def __getattr__(self, type_name):
        if type_name.startswith('__'):
            raise AttributeError(type_name)

        def layer_fn(*args, **kwargs):
            fn = Function(type_name, args, kwargs)
            if fn.ntop == 0:
                return fn
            if fn.ntop == 1:
                return fn.tops[0]
            return fn.tops
        layer_fn.__name__ = type_name
        return layer_fn


class _EnumValues:
    """Enum values of one layer type's parameter message (``P.Pooling.MAX``)."""

    def __init__(self, type_name):
        self._type_name = type_name

    def _message_classes(self):
        # pycaffe looks up <Type>Parameter; types sharing another type's
        # message (Deconvolution) find theirs through the field map.
        own = getattr(crema_pb2, self._type_name + 'Parameter', None)
        if own is not None:
            yield own
        field = _param_field(self._type_name)
        if field is not None:
            yield type(getattr(crema_pb2.LayerParameter(), field))

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        for cls in self._message_classes():
            desc = cls.DESCRIPTOR
            # Only enum values and enum types, not the class's other members.
            if name in desc.enum_values_by_name or name in desc.enum_types_by_name:
                return getattr(cls, name)
        raise AttributeError('no enum value %r in the parameters of layer '
                             'type %s' % (name, self._type_name))


class Parameters:
    """``params.<Type>.<NAME>`` is enum value NAME of ``<Type>Parameter``."""

    def __getattr__(self, type_name):
        if type_name.startswith('__'):
            raise AttributeError(type_name)
        return _EnumValues(type_name)


layers = Layers()
params = Parameters()
