"""`crema export`: a net written as ONNX is a valid model (onnx.checker) and
computes what the net computes, checked by two runtimes: OpenCV's dnn and
ONNX Runtime (the `onnxruntime` fixture).

Each net gets random weights (BVLC's deploy files come without trained ones),
is saved, exported by the tool, and both run on the same random input.
"""
import re
import subprocess

import numpy as np
import pytest

crema = pytest.importorskip("crema")
onnx = pytest.importorskip("onnx")
cv2 = pytest.importorskip("cv2")

# Largest |onnx - crema| / largest |crema| over a net's outputs.
TOLERANCE = 1e-4
RESULTS = {}

BVLC_NETS = {
    "LeNet": "bvlc/examples/mnist/lenet.prototxt",
    "cifar10_quick": "bvlc/examples/cifar10/cifar10_quick.prototxt",
    "CaffeNet": "bvlc/models/bvlc_reference_caffenet/deploy.prototxt",
    "AlexNet": "bvlc/models/bvlc_alexnet/deploy.prototxt",
    "R-CNN": "bvlc/models/bvlc_reference_rcnn_ilsvrc13/deploy.prototxt",
    "Flickr style": "bvlc/models/finetune_flickr_style/deploy.prototxt",
    "GoogLeNet": "bvlc/models/bvlc_googlenet/deploy.prototxt",
}

# A ResNet-style block: conv -> BatchNorm -> Scale -> ReLU in place, a
# residual Eltwise SUM, pools whose ceil-rounded sizes (20 -> 11 and 10)
# differ from floor ones (10 and 9), AVE with padding whose last window passes
# the padding, LRN, Flatten and Reshape with Caffe's 0 and -1, other neuron
# layers, and two outputs.
RESNET_STYLE = """
name: "resnet_style"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 20 dim: 20 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 8 kernel_size: 3 pad: 1 stride: 1 } }
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" batch_norm_param { eps: 1e-4 } }
layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
        convolution_param { num_output: 8 kernel_h: 3 kernel_w: 1 pad_h: 1 pad_w: 0 bias_term: false } }
layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "conv2" }
layer { name: "scale2" type: "Scale" bottom: "conv2" top: "conv2" scale_param { bias_term: false } }
layer { name: "sum" type: "Eltwise" bottom: "conv1" bottom: "conv2" top: "sum"
        eltwise_param { operation: SUM coeff: 1 coeff: -0.5 } }
layer { name: "leaky" type: "ReLU" bottom: "sum" top: "sum" relu_param { negative_slope: 0.1 } }
layer { name: "pool_max" type: "Pooling" bottom: "sum" top: "pool_max"
        pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1 } }
layer { name: "pool_out" type: "Pooling" bottom: "sum" top: "pool_out"
        pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "pool_ave" type: "Pooling" bottom: "sum" top: "pool_ave"
        pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 } }
layer { name: "prod" type: "Eltwise" bottom: "pool_max" bottom: "pool_ave" top: "prod"
        eltwise_param { operation: PROD } }
layer { name: "norm" type: "LRN" bottom: "prod" top: "norm"
        lrn_param { local_size: 5 alpha: 0.01 beta: 0.75 k: 2 } }
layer { name: "prelu" type: "PReLU" bottom: "norm" top: "norm" }
layer { name: "deconv" type: "Deconvolution" bottom: "norm" top: "deconv"
        convolution_param { num_output: 4 kernel_size: 2 stride: 2 group: 2 } }
layer { name: "sig" type: "Sigmoid" bottom: "deconv" top: "sig" }
layer { name: "power" type: "Power" bottom: "sig" top: "power"
        power_param { power: 2 scale: 0.5 shift: 1 } }
layer { name: "flat" type: "Flatten" bottom: "power" top: "flat" }
layer { name: "reshape" type: "Reshape" bottom: "flat" top: "reshape"
        reshape_param { shape { dim: 0 dim: 4 dim: -1 } } }
layer { name: "fc" type: "InnerProduct" bottom: "reshape" top: "fc"
        inner_product_param { num_output: 10 axis: 1 } }
layer { name: "tanh" type: "TanH" bottom: "fc" top: "fc" }
layer { name: "prob" type: "Softmax" bottom: "fc" top: "prob" }
"""


def batch_one(text):
    """The deploy net at batch 1 (its first input dimension)."""
    return re.sub(r"dim: \d+", "dim: 1", text, count=1)


def randomize(net, rng):
    """He-scaled random weights, small random biases and, for BatchNorm,
    statistics stored as sums with a scale factor that is not 1."""
    for name, blobs in net.params.items():
        if net.layer_dict[name].type == "BatchNorm":
            channels = blobs[0].data.shape[0]
            factor = 7.0
            blobs[0].data[...] = rng.normal(0, 0.5, channels) * factor
            blobs[1].data[...] = rng.uniform(0.5, 2.0, channels) * factor
            blobs[2].data[...] = factor
            continue
        for i, blob in enumerate(blobs):
            shape = blob.data.shape
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            std = np.sqrt(2.0 / fan_in) if len(shape) > 1 else 0.1
            blob.data[...] = rng.normal(0, std, shape)


def export(tool, model, weights, output):
    return subprocess.run([tool, "export", "--model=%s" % model, "--weights=%s" % weights,
                           "--output=%s" % output], capture_output=True, text=True)


def compare(label, text, tool, tmp_path, onnxruntime):
    crema.set_random_seed(1701)
    rng = np.random.default_rng(1701)
    model = tmp_path / "deploy.prototxt"
    model.write_text(text)
    net = crema.Net(str(model), crema.TEST)
    randomize(net, rng)
    weights = tmp_path / "weights.caffemodel"
    net.save(str(weights))
    output = tmp_path / "net.onnx"
    run = export(tool, model, weights, output)
    assert run.returncode == 0, run.stderr
    onnx.checker.check_model(onnx.load(str(output)))

    inputs = {name: rng.normal(0, 1, net.blobs[name].data.shape).astype(np.float32)
              for name in net.inputs}
    expected = net.forward(**inputs)
    runtime = cv2.dnn.readNetFromONNX(str(output))
    for name, value in inputs.items():
        runtime.setInput(value, name)
    names = list(expected)
    results = {"OpenCV": runtime.forward(names),
               "ONNX Runtime": onnxruntime.run(output, inputs, names)}
    for runtime_name, got in results.items():
        worst = 0.0
        for name, value in zip(names, got):
            reference = expected[name]
            assert value.size == reference.size, name
            difference = np.abs(value.reshape(reference.shape) - reference).max()
            worst = max(worst, difference / np.abs(reference).max())
        RESULTS[label, runtime_name] = worst
        print("%-14s %-12s max |onnx - crema| / max |crema| = %.2e" % (label, runtime_name, worst))
        assert worst <= TOLERANCE, (label, runtime_name)


@pytest.mark.parametrize("label", list(BVLC_NETS))
def test_bvlc_net_exports_and_matches(label, crema_tool, compat, tmp_path, onnxruntime):
    text = (compat / BVLC_NETS[label]).read_text()
    compare(label, batch_one(text), crema_tool, tmp_path, onnxruntime)


def test_resnet_style_net_exports_and_matches(crema_tool, tmp_path, onnxruntime):
    compare("resnet_style", RESNET_STYLE, crema_tool, tmp_path, onnxruntime)


# An in-place layer on the net's input: the ONNX graph is fed by the net's own
# input name ("data").
IN_PLACE_ON_INPUT = """
layer { name: "input" type: "Input" top: "data"
        input_param { shape { dim: 1 dim: 3 dim: 8 dim: 8 } } }
layer { name: "prescale" type: "Power" bottom: "data" top: "data"
        power_param { scale: 0.017 shift: -1 } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
        convolution_param { num_output: 4 kernel_size: 3 } }
"""


def test_in_place_layer_on_the_input_keeps_the_input_name(crema_tool, tmp_path, onnxruntime):
    compare("in_place_input", IN_PLACE_ON_INPUT, crema_tool, tmp_path, onnxruntime)
    graph = onnx.load(str(tmp_path / "net.onnx")).graph
    assert [value.name for value in graph.input] == ["data"]


def test_trained_lenet_exports_and_matches(crema_tool, compat, tmp_path, onnxruntime):
    """LeNet with BVLC's trained weights (Fashion-MNIST), read by the tool."""
    model = compat / "bvlc/examples/mnist/lenet.prototxt"
    weights = compat / "lenet_fashion/lenet_fashion_iter_10000.caffemodel"
    output = tmp_path / "lenet.onnx"
    run = export(crema_tool, model, weights, output)
    assert run.returncode == 0, run.stderr
    onnx.checker.check_model(onnx.load(str(output)))
    net = crema.Net(str(model), str(weights), crema.TEST)
    image = np.random.default_rng(3).uniform(0, 1, net.blobs["data"].data.shape)
    expected = net.forward(data=image.astype(np.float32))["prob"]
    runtime = cv2.dnn.readNetFromONNX(str(output))
    runtime.setInput(image.astype(np.float32), "data")
    got = runtime.forward("prob").reshape(expected.shape)
    from_ort = onnxruntime.run(output, {"data": image.astype(np.float32)}, ["prob"])[0]
    for runtime_name, value in (("OpenCV", got), ("ONNX Runtime", from_ort)):
        worst = np.abs(value.reshape(expected.shape) - expected).max() / np.abs(expected).max()
        RESULTS["LeNet (trained)", runtime_name] = worst
        assert worst <= TOLERANCE, runtime_name


def test_unsupported_layer_is_one_error_line(crema_tool, tmp_path):
    text = RESNET_STYLE.replace('type: "TanH"', 'type: "Threshold"')
    model = tmp_path / "deploy.prototxt"
    model.write_text(text)
    net = crema.Net(str(model), crema.TEST)
    weights = tmp_path / "weights.caffemodel"
    net.save(str(weights))
    run = export(crema_tool, model, weights, tmp_path / "x.onnx")
    assert run.returncode == 1
    errors = [line for line in run.stderr.splitlines() if line.startswith("E")]
    assert len(errors) == 1, run.stderr
    assert "layer 'tanh' of type Threshold" in errors[0]
    assert not (tmp_path / "x.onnx").exists()


def test_opset_out_of_range_is_refused(crema_tool, compat, tmp_path):
    model = compat / "bvlc/examples/mnist/lenet.prototxt"
    weights = compat / "lenet_fashion/lenet_fashion_iter_10000.caffemodel"
    run = subprocess.run([crema_tool, "export", "--model=%s" % model, "--weights=%s" % weights,
                          "--output=%s" % (tmp_path / "x.onnx"), "--opset=9"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "opset 9" in run.stderr


def test_export_onnx_from_python(compat, tmp_path):
    """crema.export_onnx writes what the tool writes; a refused layer raises."""
    model = compat / "bvlc/examples/mnist/lenet.prototxt"
    weights = compat / "lenet_fashion/lenet_fashion_iter_10000.caffemodel"
    output = tmp_path / "lenet.onnx"
    crema.export_onnx(str(model), str(weights), str(output))
    graph = onnx.load(str(output)).graph
    assert graph.node[0].op_type == "Conv"
    assert [value.name for value in graph.output] == ["prob"]
    bad = tmp_path / "bad.prototxt"
    bad.write_text(model.read_text().replace('type: "ReLU"', 'type: "Threshold"'))
    with pytest.raises(crema.Error, match="of type Threshold"):
        crema.export_onnx(str(bad), str(weights), str(tmp_path / "bad.onnx"))
