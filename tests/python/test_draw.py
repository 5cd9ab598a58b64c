"""Tests of crema.draw, pycaffe's net drawing."""

import glob
import os
import re
import shutil
import subprocess
import sys

import pytest
from google.protobuf import text_format

import crema
from crema import draw
from crema.proto import crema_pb2

PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'
needs_dot = pytest.mark.skipif(shutil.which('dot') is None,
                               reason="Graphviz 'dot' is not installed")

SMALL_NET = """
name: "small"
layer { name: "input" type: "Input" top: "data" top: "label"
        input_param { shape { dim: 2 dim: 1 dim: 8 dim: 8 } shape { dim: 2 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
        convolution_param { num_output: 20 kernel_size: 5 stride: 2 pad: 1 } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
        pooling_param { pool: AVE kernel_size: 3 stride: 2 } }
layer { name: "relu1" type: "ReLU" bottom: "pool1" top: "pool1" }
layer { name: "ip1" type: "InnerProduct" bottom: "pool1" top: "ip1"
        inner_product_param { num_output: 10 } }
layer { name: "accuracy" type: "Accuracy" bottom: "ip1" bottom: "label"
        top: "accuracy" include { phase: TEST } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip1" bottom: "label"
        top: "loss" exclude { phase: TEST } }
"""

NODE_RE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" \[(.*)\];$', re.M)
EDGE_RE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)"', re.M)


def parse_net(text):
    net = crema_pb2.NetParameter()
    text_format.Merge(text, net)
    return net


def dot_nodes(dot):
    return {m.group(1): m.group(2) for m in NODE_RE.finditer(dot)}


def dot_edges(dot):
    return [(m.group(1), m.group(2)) for m in EDGE_RE.finditer(dot)]


def layer_named(net, name):
    return next(l for l in net.layer if l.name == name)


# --------------------------------------------------------------------------
# DOT text


def test_dot_has_one_node_per_layer_and_blob():
    dot = draw.to_dot(parse_net(SMALL_NET))
    nodes = dot_nodes(dot)
    assert set(nodes) == {
        'input_Input', 'conv1_Convolution', 'pool1_Pooling', 'relu1_ReLU',
        'ip1_InnerProduct', 'accuracy_Accuracy', 'loss_SoftmaxWithLoss',
        'data_blob', 'label_blob', 'conv1_blob', 'pool1_blob', 'ip1_blob',
        'accuracy_blob', 'loss_blob'}
    for node_id, attrs in nodes.items():
        shape = 'octagon' if node_id.endswith('_blob') else 'record'
        assert 'shape="%s"' % shape in attrs, (node_id, attrs)
    assert dot.startswith('digraph "small" {')
    assert 'rankdir=LR;' in dot


def test_dot_edges_follow_bottoms_and_tops():
    edges = dot_edges(draw.to_dot(parse_net(SMALL_NET)))
    assert sorted(edges) == sorted([
        ('input_Input', 'data_blob'), ('input_Input', 'label_blob'),
        ('data_blob', 'conv1_Convolution'), ('conv1_Convolution', 'conv1_blob'),
        ('conv1_blob', 'pool1_Pooling'), ('pool1_Pooling', 'pool1_blob'),
        # In place: from the blob and back to the same blob.
        ('pool1_blob', 'relu1_ReLU'), ('relu1_ReLU', 'pool1_blob'),
        ('pool1_blob', 'ip1_InnerProduct'), ('ip1_InnerProduct', 'ip1_blob'),
        ('ip1_blob', 'accuracy_Accuracy'), ('label_blob', 'accuracy_Accuracy'),
        ('accuracy_Accuracy', 'accuracy_blob'),
        ('ip1_blob', 'loss_SoftmaxWithLoss'), ('label_blob', 'loss_SoftmaxWithLoss'),
        ('loss_SoftmaxWithLoss', 'loss_blob')])


def test_edge_labels_carry_num_output():
    dot = draw.to_dot(parse_net(SMALL_NET))
    assert '"conv1_Convolution" -> "conv1_blob" [label="20"];' in dot
    assert '"ip1_InnerProduct" -> "ip1_blob" [label="10"];' in dot
    assert '"data_blob" -> "conv1_Convolution" [label=""];' in dot


def test_phase_filtering():
    net = parse_net(SMALL_NET)
    train = dot_nodes(draw.to_dot(net, phase=crema_pb2.TRAIN))
    test = dot_nodes(draw.to_dot(net, phase=crema_pb2.TEST))
    everything = dot_nodes(draw.to_dot(net, phase=None))
    assert 'accuracy_Accuracy' not in train and 'accuracy_blob' not in train
    assert 'loss_SoftmaxWithLoss' in train
    assert 'accuracy_Accuracy' in test and 'loss_SoftmaxWithLoss' not in test
    assert {'accuracy_Accuracy', 'loss_SoftmaxWithLoss'} <= set(everything)
    assert len(train) == len(everything) - 2 == len(test)


def test_rules_without_phase_match_every_phase():
    # Stages and levels are ignored: a drawing has no net state.
    net = parse_net(SMALL_NET + 'layer { name: "extra" type: "Silence" '
                    'bottom: "ip1" include { stage: "deploy" } }')
    for phase in (crema_pb2.TRAIN, crema_pb2.TEST):
        assert 'extra_Silence' in dot_nodes(draw.to_dot(net, phase=phase))


def test_include_and_exclude_together_is_an_error():
    net = parse_net(SMALL_NET)
    layer_named(net, 'accuracy').exclude.add(phase=crema_pb2.TRAIN)
    with pytest.raises(ValueError, match='accuracy'):
        draw.to_dot(net, phase=crema_pb2.TEST)


def test_in_place_and_typed_colours():
    nodes = dot_nodes(draw.to_dot(parse_net(SMALL_NET)))
    assert 'fillcolor="#90EE90"' in nodes['relu1_ReLU']
    assert 'fillcolor="#FF5050"' in nodes['conv1_Convolution']
    assert 'fillcolor="#FF9900"' in nodes['pool1_Pooling']
    assert 'fillcolor="#CC33FF"' in nodes['ip1_InnerProduct']
    assert 'fillcolor="#6495ED"' in nodes['loss_SoftmaxWithLoss']
    assert draw.choose_color_by_layertype('Deconvolution') == '#FF5050'
    assert draw.choose_color_by_layertype('Sigmoid') == '#6495ED'


def test_rankdir_checked():
    assert 'rankdir=TB;' in draw.to_dot(parse_net(SMALL_NET), rankdir='TB')
    with pytest.raises(ValueError, match='rankdir'):
        draw.to_dot(parse_net(SMALL_NET), rankdir='XY')


def test_v1_layers_are_refused():
    net = parse_net('layers { name: "c" type: CONVOLUTION }')
    with pytest.raises(ValueError, match='upgrade_net_proto_text'):
        draw.to_dot(net)


# --------------------------------------------------------------------------
# Label helpers


def test_layer_labels():
    net = parse_net(SMALL_NET)
    conv = draw.get_layer_label(layer_named(net, 'conv1'), 'LR')
    assert conv == ('"conv1\\n(Convolution)\\nkernel size: 5\\nstride: 2'
                    '\\npad: 1\\nnum output: 20"')
    pool = draw.get_layer_label(layer_named(net, 'pool1'), 'TB')
    assert pool == '"pool1 (AVE Pooling) kernel size: 3 stride: 2 pad: 0"'
    assert draw.get_layer_label(layer_named(net, 'loss'), 'LR') == \
        '"loss\\n(SoftmaxWithLoss)"'


def test_display_lrm_adds_multipliers():
    net = parse_net(SMALL_NET)
    label = draw.get_layer_label(layer_named(net, 'conv1'), 'LR', display_lrm=True)
    assert 'lr mult: 1, 2' in label and 'decay mult: 1, 0' in label
    ip_label = draw.get_layer_label(layer_named(net, 'ip1'), 'LR', display_lrm=True)
    assert 'lr mult: 1' in ip_label  # schema default, no param entries
    relu = draw.get_layer_label(layer_named(net, 'relu1'), 'LR', display_lrm=True)
    assert 'lr mult' not in relu
    assert 'lr mult' not in draw.to_dot(net)
    assert 'lr mult: 1, 2' in draw.to_dot(net, display_lrm=True)


def test_edge_labels():
    net = parse_net(SMALL_NET + 'layer { name: "d" type: "Data" top: "x" '
                    'data_param { batch_size: 32 } }')
    assert draw.get_edge_label(layer_named(net, 'd')) == 'Batch 32'
    assert draw.get_edge_label(layer_named(net, 'conv1')) == '20'
    assert draw.get_edge_label(layer_named(net, 'loss')) == '""'


def test_special_characters_are_escaped():
    net = parse_net('layer { name: "a\\"b{c}" type: "ReLU" bottom: "x|y" top: "z" }')
    dot = draw.to_dot(net)
    assert 'label="a\\"b\\{c\\}\\n(ReLU)"' in dot
    assert '"x|y_blob" [' in dot


# --------------------------------------------------------------------------
# Rendering


@needs_dot
def test_draw_net_renders_png_and_svg(tmp_path):
    net = parse_net(SMALL_NET)
    png = draw.draw_net(net, 'LR')
    assert png.startswith(PNG_SIGNATURE)
    svg_file = tmp_path / 'small.svg'
    draw.draw_net_to_file(net, str(svg_file), 'TB', phase=crema_pb2.TRAIN)
    svg = svg_file.read_text()
    assert '<svg' in svg and 'conv1' in svg and 'accuracy' not in svg


def test_missing_dot_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(draw.shutil, 'which', lambda name: None)
    with pytest.raises(RuntimeError, match='graphviz'):
        draw.draw_net(parse_net(SMALL_NET), 'LR')


# --------------------------------------------------------------------------
# Command line


def run_cli(*args):
    """Run ``python -m crema.draw`` with this process's crema package."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(crema.__file__)))
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        [package_root] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p])
    return subprocess.run([sys.executable, '-m', 'crema.draw'] + list(args),
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def bvlc_lenet(compat):
    """BVLC's LeNet train/test prototxt in the compat files (conftest.py)."""
    found = sorted(glob.glob(os.path.join(str(compat), '**', 'lenet_train_test.prototxt'),
                             recursive=True))
    if not found:
        pytest.skip('no lenet_train_test.prototxt under %s' % compat)
    # Prefer BVLC's own example over derived copies.
    bvlc = [f for f in found if '/bvlc/' in f]
    return (bvlc or found)[0]


@needs_dot
def test_cli_draws_bvlc_lenet_png(tmp_path, bvlc_lenet):
    out = tmp_path / 'lenet.png'
    result = run_cli(bvlc_lenet, str(out), '--rankdir', 'TB', '--phase', 'TRAIN',
                     '--display_lrm')
    assert result.returncode == 0, result.stderr
    assert 'Drawing net to' in result.stdout
    data = out.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 1000


def test_cli_malformed_prototxt(tmp_path):
    bad = tmp_path / 'bad.prototxt'
    bad.write_text('name: "x"\nlayer {\n  nmae: "conv"\n}\n')
    out = tmp_path / 'bad.png'
    result = run_cli(str(bad), str(out))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(bad) + ':3:' in lines[0] and 'nmae' in lines[0]
    assert 'Traceback' not in result.stderr
    assert not out.exists()


def test_cli_missing_prototxt(tmp_path):
    missing = tmp_path / 'nowhere.prototxt'
    result = run_cli(str(missing), str(tmp_path / 'out.png'))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(missing) in lines[0], result.stderr


def test_cli_rejects_unknown_phase(tmp_path):
    net = tmp_path / 'small.prototxt'
    net.write_text(SMALL_NET)
    result = run_cli(str(net), str(tmp_path / 'x.png'), '--phase', 'VAL')
    assert result.returncode != 0
    assert 'phase' in result.stderr


@needs_dot
def test_cli_unwritable_output_is_one_error_line(tmp_path):
    """The drawing is written by Crema's safe-write rule (crema._crema._write_file)."""
    net = tmp_path / 'small.prototxt'
    net.write_text(SMALL_NET)
    missing = tmp_path / 'no_such_folder' / 'x.png'
    result = run_cli(str(net), str(missing))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(missing) + ': cannot write the file' in lines[0], result.stderr
    assert 'No such file or directory' in lines[0]
