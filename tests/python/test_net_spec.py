"""Tests of crema.net_spec, pycaffe's NetSpec API."""

import os
import re
import subprocess

import pytest
from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor

from crema import net_spec
from crema.net_spec import NetSpec, layers as L, params as P, to_proto
from crema.proto import crema_pb2


def parse_net(text):
    net = crema_pb2.NetParameter()
    text_format.Merge(text, net)
    return net


# --------------------------------------------------------------------------
# (a) LeNet written with NetSpec equals the hand-written prototxt


def lenet_netspec(source, batch_size):
    n = NetSpec()
    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB,
                             source=source,
                             transform_param=dict(scale=0.00390625), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20,
                            weight_filler=dict(type='xavier'))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50,
                            weight_filler=dict(type='xavier'))
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.fc1 = L.InnerProduct(n.pool2, num_output=500,
                           weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.fc1, in_place=True)
    n.score = L.InnerProduct(n.relu1, num_output=10,
                             weight_filler=dict(type='xavier'))
    n.accuracy = L.Accuracy(n.score, n.label,
                            include=dict(phase=crema_pb2.TEST))
    n.loss = L.SoftmaxWithLoss(n.score, n.label)
    return n.to_proto()


LENET_PROTOTXT = """
layer {
  name: "data" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.00390625 }
  data_param { source: "mnist_train_lmdb" batch_size: 64 backend: LMDB }
}
layer {
  name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 20 kernel_size: 5
                      weight_filler { type: "xavier" } }
}
layer {
  name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 }
}
layer {
  name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  convolution_param { num_output: 50 kernel_size: 5
                      weight_filler { type: "xavier" } }
}
layer {
  name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 }
}
layer {
  name: "fc1" type: "InnerProduct" bottom: "pool2" top: "fc1"
  inner_product_param { num_output: 500 weight_filler { type: "xavier" } }
}
layer { name: "relu1" type: "ReLU" bottom: "fc1" top: "fc1" }
layer {
  name: "score" type: "InnerProduct" bottom: "fc1" top: "score"
  inner_product_param { num_output: 10 weight_filler { type: "xavier" } }
}
layer {
  name: "accuracy" type: "Accuracy" bottom: "score" bottom: "label"
  top: "accuracy" include { phase: TEST }
}
layer {
  name: "loss" type: "SoftmaxWithLoss" bottom: "score" bottom: "label"
  top: "loss"
}
"""


def test_lenet_matches_handwritten_prototxt():
    built = lenet_netspec('mnist_train_lmdb', 64)
    expected = parse_net(LENET_PROTOTXT)
    assert [l.name for l in built.layer] == [l.name for l in expected.layer]
    for got, want in zip(built.layer, expected.layer):
        assert got == want, 'layer %s differs:\n%s\nvs\n%s' % (got.name, got, want)
    assert built == expected


def test_lenet_text_round_trips():
    built = lenet_netspec('mnist_train_lmdb', 64)
    text = str(built)
    assert 'backend: LMDB' in text and 'phase: TEST' in text
    assert parse_net(text) == built


# --------------------------------------------------------------------------
# (b) the C++ side parses and runs a NetSpec net


def input_net():
    n = NetSpec()
    n.ns_data, n.ns_label = L.Input(
        shape=[dict(dim=[2, 1, 28, 28]), dict(dim=[2])], ntop=2)
    n.ns_conv1 = L.Convolution(n.ns_data, kernel_size=5, num_output=4,
                               weight_filler=dict(type='xavier'))
    n.ns_pool1 = L.Pooling(n.ns_conv1, kernel_size=2, stride=2,
                           pool=P.Pooling.MAX)
    n.ns_ip1 = L.InnerProduct(n.ns_pool1, num_output=8,
                              weight_filler=dict(type='xavier'))
    n.ns_relu1 = L.ReLU(n.ns_ip1, in_place=True)
    n.ns_ip2 = L.InnerProduct(n.ns_relu1, num_output=10,
                              weight_filler=dict(type='xavier'))
    n.ns_loss = L.SoftmaxWithLoss(n.ns_ip2, n.ns_label)
    return n.to_proto()


def test_cpp_tool_runs_netspec_prototxt(tmp_path, crema_tool):
    # crema_tool (conftest.py) skips when build/cpu/bin/crema (or
    # $CREMA_TOOL) is missing.
    net = input_net()
    model = tmp_path / 'net.prototxt'
    model.write_text(str(net))
    result = subprocess.run([crema_tool, 'time', '--model=%s' % model,
                             '--iterations=1'],
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, GLOG_minloglevel='0'))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    names = [layer.name for layer in net.layer]
    assert len(names) == 7
    for name in names:
        assert re.search(r'\b%s\b' % name, output), (name, output)


# --------------------------------------------------------------------------
# (c) every parameter message of LayerParameter is reachable


# Parameter messages whose type name is not a layer type: a layer type that
# reads them, and whether keywords reach them (else they are given
# explicitly as <x>_param=dict(...), as in pycaffe).
SPECIAL_USERS = {
    'TransformationParameter': ('Data', False),
    'LossParameter': ('SoftmaxWithLoss', False),
    'RecurrentParameter': ('LSTM', True),
}


def param_fields():
    for field in crema_pb2.LayerParameter.DESCRIPTOR.fields:
        if field.message_type is not None and field.name.endswith('_param'):
            yield field


def sample_value(field):
    """A non-default value for the scalar ``field``."""
    if field.enum_type is not None:
        return field.enum_type.values[-1].number
    if field.type == FieldDescriptor.TYPE_BOOL:
        return not field.default_value if field.has_default_value else True
    if field.type == FieldDescriptor.TYPE_STRING:
        return 'netspec-value'
    if field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return 0.25
    return 3


def first_scalar(message_descriptor):
    for field in message_descriptor.fields:
        if field.message_type is None:
            return field
    return None


def test_param_fields_found():
    names = [f.name for f in param_fields()]
    assert 'convolution_param' in names and 'transform_param' in names
    assert len(names) >= 45


def values_of(message, field):
    """The field's values as a list, whether it is repeated or not."""
    value = getattr(message, field.name)
    return list(value) if field.label == FieldDescriptor.LABEL_REPEATED else [value]


@pytest.mark.parametrize('field', list(param_fields()), ids=lambda f: f.name)
def test_every_param_message_is_settable(field):
    message = field.message_type
    type_name, by_keyword = SPECIAL_USERS.get(
        message.name, (message.name[:-len('Parameter')], True))
    scalar = first_scalar(message)
    if scalar is None:
        # Only sub-messages (InputParameter.shape...): set the first one.
        scalar = message.fields[0]
        value = dict(dim=[2, 3]) if scalar.message_type.name == 'BlobShape' else {}
    else:
        value = sample_value(scalar)
    kwargs = {scalar.name: value}
    # A message two fields hold (ReLUParameter: relu_param and MobileNet-YOLO's
    # relu6_param): keywords reach the first; the other is set by name.
    first_holder = next(f for f in crema_pb2.LayerParameter.DESCRIPTOR.fields
                        if f.message_type is message and f.name.endswith('_param'))
    if not by_keyword or first_holder is not field:
        kwargs = {field.name: kwargs}
    layer = getattr(L, type_name)(**kwargs).to_proto().layer[0]
    assert layer.type == type_name
    assert layer.HasField(field.name), str(layer)
    param = getattr(layer, field.name)
    if scalar.message_type is not None:
        assert [list(v.dim) for v in values_of(param, scalar)] == [[2, 3]]
    else:
        assert values_of(param, scalar) == [pytest.approx(value)
                                            if isinstance(value, float) else value]
    # Only that parameter message is set.
    set_params = [f.name for f, _ in layer.ListFields() if f.name.endswith('_param')]
    assert set_params == [field.name]


@pytest.mark.parametrize('type_name, field_name', [
    ('Deconvolution', 'convolution_param'),
    ('Im2col', 'convolution_param'),
    ('LSTM', 'recurrent_param'),
    ('RNN', 'recurrent_param'),
    ('LRN', 'lrn_param'),
    ('HDF5Data', 'hdf5_data_param'),
    ('PReLU', 'prelu_param'),
    ('SPP', 'spp_param'),
    ('ELU', 'elu_param'),
])
def test_irregular_type_to_field_names(type_name, field_name):
    assert net_spec.param_name_dict()[type_name] + '_param' == field_name


def test_deconvolution_keywords_go_to_convolution_param():
    layer = L.Deconvolution(L.Input(), num_output=3, kernel_size=4,
                            stride=2).to_proto().layer[1]
    assert layer.convolution_param.num_output == 3
    assert list(layer.convolution_param.kernel_size) == [4]
    assert list(layer.convolution_param.stride) == [2]


# --------------------------------------------------------------------------
# (d) values, tops, enums, errors


def test_repeated_fields_and_dict_in_list():
    top = L.Convolution(L.Input(), num_output=8, kernel_size=[3, 5], pad=1,
                        param=[dict(lr_mult=1, decay_mult=1),
                               dict(lr_mult=2, decay_mult=0)],
                        loss_weight=0.5, propagate_down=[True],
                        bias_filler=dict(type='constant', value=0.1))
    layer = top.to_proto().layer[1]
    conv = layer.convolution_param
    assert list(conv.kernel_size) == [3, 5]
    assert list(conv.pad) == [1]
    assert [(p.lr_mult, p.decay_mult) for p in layer.param] == [(1, 1), (2, 0)]
    assert list(layer.loss_weight) == [0.5]
    assert list(layer.propagate_down) == [True]
    assert conv.bias_filler.type == 'constant'
    assert conv.bias_filler.value == pytest.approx(0.1)


def test_repeated_message_from_single_dict_and_nested_lists():
    data = L.DummyData(shape=[dict(dim=[1, 2]), dict(dim=[3])],
                       data_filler=dict(type='gaussian', std=0.5))
    param = data.to_proto().layer[0].dummy_data_param
    assert [list(s.dim) for s in param.shape] == [[1, 2], [3]]
    assert [f.type for f in param.data_filler] == ['gaussian']


def test_numpy_values():
    import numpy as np
    layer = L.Convolution(L.Input(shape=dict(dim=np.array([1, 3, 8, 8]))),
                          num_output=np.int64(4), bias_term=np.bool_(False),
                          kernel_size=np.array([3, 3])).to_proto().layer
    assert list(layer[0].input_param.shape[0].dim) == [1, 3, 8, 8]
    conv = layer[1].convolution_param
    assert conv.num_output == 4 and conv.bias_term is False
    assert list(conv.kernel_size) == [3, 3]


def test_enum_by_name_and_by_value():
    a = L.Pooling(L.Input(), pool='AVE').to_proto().layer[1]
    b = L.Pooling(L.Input(), pool=P.Pooling.AVE).to_proto().layer[1]
    assert a.pooling_param.pool == b.pooling_param.pool == crema_pb2.PoolingParameter.AVE


def test_params_enum_lookup():
    assert P.Pooling.MAX == crema_pb2.PoolingParameter.MAX
    assert P.Pooling.STOCHASTIC == 2
    assert P.Data.LMDB == crema_pb2.DataParameter.LMDB == 1
    assert P.Eltwise.PROD == crema_pb2.EltwiseParameter.PROD
    assert P.Loss.VALID == crema_pb2.LossParameter.VALID
    assert P.Deconvolution.CUDNN == crema_pb2.ConvolutionParameter.CUDNN
    with pytest.raises(AttributeError, match='NOPE'):
        P.Pooling.NOPE


def test_in_place_reuses_bottom_name():
    n = NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 3]))
    n.fc = L.InnerProduct(n.data, num_output=2)
    n.relu = L.ReLU(n.fc, in_place=True)
    n.drop = L.Dropout(n.relu, in_place=True, dropout_ratio=0.3)
    n.out = L.Softmax(n.drop)
    net = n.to_proto()
    by_name = {l.name: l for l in net.layer}
    assert list(by_name['relu'].bottom) == list(by_name['relu'].top) == ['fc']
    assert list(by_name['drop'].top) == ['fc']
    assert list(by_name['out'].bottom) == ['fc']
    assert by_name['drop'].dropout_param.dropout_ratio == pytest.approx(0.3)


def test_ntop_two_returns_tuple_and_names_both():
    n = NetSpec()
    tops = L.Data(source='db', batch_size=4, ntop=2)
    assert isinstance(tops, tuple) and len(tops) == 2
    n.image, n.target = tops
    n.loss = L.EuclideanLoss(n.image, n.target)
    net = n.to_proto()
    assert net.layer[0].name == 'image'
    assert list(net.layer[0].top) == ['image', 'target']
    assert list(net.layer[1].bottom) == ['image', 'target']


def test_ntop_zero_returns_layer_without_tops():
    n = NetSpec()
    n.data = L.Input(shape=dict(dim=[1]))
    silence = L.Silence(n.data, ntop=0)
    assert isinstance(silence, net_spec.Function)
    n.silence = silence
    net = n.to_proto()
    assert [l.name for l in net.layer] == ['data', 'silence']
    assert list(net.layer[1].top) == [] and list(net.layer[1].bottom) == ['data']
    # Unnamed, it is named after its type.
    assert to_proto(L.Silence(L.Input(), ntop=0)).layer[1].name == 'Silence1'


def test_unknown_keyword_names_keyword_and_type():
    with pytest.raises((AttributeError, ValueError)) as err:
        L.Convolution(L.Input(), num_output=2, kernel_sise=3)
    assert 'kernel_sise' in str(err.value) and 'Convolution' in str(err.value)


def test_unknown_nested_field_and_bad_value_are_reported():
    with pytest.raises(AttributeError, match='weight_filler.*tpye'):
        L.InnerProduct(L.Input(), weight_filler=dict(tpye='xavier'))
    with pytest.raises(TypeError, match='num_output'):
        L.InnerProduct(L.Input(), num_output='ten')
    with pytest.raises(ValueError, match='MAXX'):
        L.Pooling(L.Input(), pool='MAXX')
    with pytest.raises(ValueError, match='top'):
        L.ReLU(L.Input(), top='x')
    with pytest.raises(TypeError, match='not a Top'):
        L.ReLU('data')


def test_loss_parameters_need_loss_param():
    with pytest.raises(AttributeError, match='ignore_label'):
        L.SoftmaxWithLoss(L.Input(), L.Input(), ignore_label=3)
    layer = L.SoftmaxWithLoss(L.Input(), L.Input(),
                              loss_param=dict(ignore_label=3)).to_proto().layer[-1]
    assert layer.loss_param.ignore_label == 3


def test_explicit_name_and_item_access():
    n = NetSpec()
    n['data'] = L.Input(shape=dict(dim=[1, 4]))
    n.fc = L.InnerProduct(n['data'], num_output=2, name='custom')
    assert n['fc'] is n.fc
    assert 'fc' in n and n.keys() == ['data', 'fc']
    net = n.to_proto()
    assert [l.name for l in net.layer] == ['data', 'custom']
    assert list(net.layer[1].top) == ['fc']
    with pytest.raises(AttributeError):
        n.missing


def test_netspec_autonames_unassigned_tops():
    n = NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 4]))
    hidden = L.ReLU(L.InnerProduct(n.data, num_output=4))
    n.out = L.InnerProduct(hidden, num_output=2)
    net = n.to_proto()
    assert [l.name for l in net.layer] == ['data', 'InnerProduct1', 'ReLU1', 'out']
    assert list(net.layer[3].bottom) == ['ReLU1']


def test_shared_bottom_emits_layer_once():
    n = NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 4]))
    n.a = L.ReLU(n.data)
    n.b = L.Sigmoid(n.data)
    n.sum = L.Eltwise(n.a, n.b, operation=P.Eltwise.SUM, coeff=[1, -1])
    net = n.to_proto()
    assert [l.name for l in net.layer] == ['data', 'a', 'b', 'sum']
    assert list(net.layer[3].eltwise_param.coeff) == [1, -1]


# --------------------------------------------------------------------------
# (e) module-level to_proto


def test_to_proto_of_tiny_chain():
    data = L.Input(shape=dict(dim=[1, 1, 4, 4]))
    conv = L.Convolution(data, num_output=2, kernel_size=3)
    net = to_proto(L.ReLU(conv))
    assert [(l.name, l.type) for l in net.layer] == [
        ('Input1', 'Input'), ('Convolution1', 'Convolution'), ('ReLU1', 'ReLU')]
    assert list(net.layer[1].bottom) == ['Input1']
    assert list(net.layer[2].bottom) == ['Convolution1']
    assert list(net.layer[0].input_param.shape[0].dim) == [1, 1, 4, 4]
    # Top.to_proto is the same.
    assert conv.to_proto() == to_proto(conv)
    assert parse_net(str(net)) == net
