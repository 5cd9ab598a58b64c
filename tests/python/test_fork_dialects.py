"""Nets written here in the forks' own syntax (issue 49), as each fork's
examples write them, computed by Crema and by OpenCV 4.6's Caffe importer
(cv2.dnn.readNetFromCaffe) on the same seeded weights and input.

- OpenCV's dialect: pooling with ceil_mode: false, BatchNorm with scale_bias.
- NVCaffe's: its mixed-precision net and layer fields (which Crema accepts
  and computes in float), BatchNorm with scale_bias, and weights in a
  .caffemodel as NVCaffe writes it, raw_data of FLOAT16 values.
- Intel's: its string engine fields and MKL2017 / MKLDNN engines.

Where OpenCV's schema lacks a fork's field, OpenCV reads the file without
it (the note says which); the weights file is the same for both.
Measure: largest |OpenCV - Crema| over largest |Crema|, at most 1e-4.
"""
import numpy as np
import pytest

crema = pytest.importorskip("crema")
cv2 = pytest.importorskip("cv2")
from crema.proto import crema_pb2  # noqa: E402

import fork_nets  # noqa: E402

TOLERANCE = 1e-4
SEED = 4949

OPENCV_NET = """
name: "opencv_dialect"
input: "data"
input_shape { dim: 2 dim: 3 dim: 22 dim: 22 }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 8 kernel_size: 3 } }
layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "bn"
  batch_norm_param { scale_bias: true eps: 0.001 } }
layer { name: "pool_max" type: "Pooling" bottom: "bn" top: "pool_max"
  pooling_param { pool: MAX kernel_size: 3 stride: 2 ceil_mode: false } }
layer { name: "pool_ave" type: "Pooling" bottom: "bn" top: "pool_ave"
  pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 ceil_mode: false } }
"""

NVCAFFE_NET = """
name: "nvcaffe_dialect"
default_forward_type: FLOAT16
default_backward_type: FLOAT16
default_forward_math: FLOAT
default_backward_math: FLOAT
global_grad_scale: 8
input: "data"
input_shape { dim: 2 dim: 3 dim: 16 dim: 16 }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  forward_type: FLOAT16 backward_type: FLOAT16
  convolution_param { num_output: 16 kernel_size: 3 pad: 1 stride: 2
    weight_filler { type: "msra" } cudnn_convolution_algo_seeker: FINDEX } }
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1"
  batch_norm_param { moving_average_fraction: 0.99 eps: 0.0001 scale_bias: true
    scale_filler { type: "constant" value: 1 } bias_filler { type: "constant" value: 0 } } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "fc" type: "InnerProduct" bottom: "conv1" top: "fc"
  inner_product_param { num_output: 10 } }
"""
# NVCaffe's fields that OpenCV's schema lacks, left out of OpenCV's copy.
NVCAFFE_ONLY = ("default_forward_type", "default_backward_type", "default_forward_math",
                "default_backward_math", "global_grad_scale", "forward_type", "backward_type",
                "cudnn_convolution_algo_seeker", "scale_filler", "bias_filler")

INTEL_NET = """
name: "intel_dialect"
input: "data"
input_shape { dim: 1 dim: 3 dim: 20 dim: 20 }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" engine: "MKL2017"
  convolution_param { num_output: 8 kernel_size: 3 engine: MKLDNN } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" engine: "MKLDNN"
  relu_param { engine: MKL2017 } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 engine: MKL2017 } }
"""


def without_fields(text, names):
    """The net of `text` with the named fields cleared wherever they are set."""
    net = fork_nets.parse(text, crema_pb2)

    def clear(message):
        for field, value in message.ListFields():
            if field.name in names:
                message.ClearField(field.name)
            elif field.type == field.TYPE_MESSAGE:
                for item in (value if field.label == field.LABEL_REPEATED else [value]):
                    clear(item)
    clear(net)
    from google.protobuf import text_format
    return text_format.MessageToString(net)


def as_nvcaffe_fp16(saved, out):
    """The caffemodel at `saved` rewritten as NVCaffe writes one: each blob's
    values as FLOAT16 bytes in raw_data (raw_data_type FLOAT16), no floats."""
    model = crema_pb2.NetParameter()
    model.ParseFromString(open(saved, "rb").read())
    for layer in model.layer:
        for blob in layer.blobs:
            values = np.array(blob.data, dtype=np.float32).astype("<f2")
            blob.ClearField("data")
            blob.raw_data_type = crema_pb2.FLOAT16
            blob.raw_data = values.tobytes()
    open(out, "wb").write(model.SerializeToString())


def run_both(text, opencv_text, tmp_path, outputs, weights_writer=None):
    model = tmp_path / "net.prototxt"
    model.write_text(text)
    crema.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    net = crema.Net(str(model), crema.TEST)
    fork_nets.randomize(net, rng)
    for name, layer in net.layer_dict.items():
        if layer.type == "BatchNorm":
            net.params[name][2].data[...] = 1  # NVCaffe's and OpenCV's factor (see forks.md)
            if len(net.params[name]) == 5:
                channels = net.params[name][3].data.shape[0]
                net.params[name][3].data[...] = rng.uniform(0.5, 1.5, channels)
                net.params[name][4].data[...] = rng.normal(0, 0.2, channels)
    weights = tmp_path / "weights.caffemodel"
    net.save(str(weights))
    if weights_writer:
        written = tmp_path / "written.caffemodel"
        weights_writer(str(weights), str(written))
        weights = written
        net = crema.Net(str(model), str(weights), crema.TEST)
    data = rng.normal(0, 1, net.blobs["data"].data.shape).astype(np.float32)
    net.forward(data=data)
    theirs_model = tmp_path / "opencv.prototxt"
    theirs_model.write_text(opencv_text)
    runtime = cv2.dnn.readNetFromCaffe(str(theirs_model), str(weights))
    runtime.setInput(data, "data")
    # OpenCV names outputs by the layer that writes them last.
    layers = [fork_nets.producer(text, output, crema_pb2) for output in outputs]
    got = runtime.forward(layers)
    worst = {}
    for output, theirs in zip(outputs, got):
        ours = net.blobs[output].data
        assert theirs.shape == ours.shape, (output, theirs.shape, ours.shape)
        worst[output] = float(np.abs(theirs - ours).max() / np.abs(ours).max())
        print("%-14s max |opencv - crema| / max |crema| = %.2e" % (output, worst[output]))
    return net, worst


def test_opencv_dialect_ceil_mode_and_scale_bias(tmp_path):
    net, worst = run_both(OPENCV_NET, OPENCV_NET, tmp_path, ["bn", "pool_max", "pool_ave"])
    # ceil_mode: false rounds down: (20 - 3) / 2 + 1 = 9, not Caffe's 10.
    assert net.blobs["pool_max"].data.shape == (2, 8, 9, 9)
    assert len(net.params["bn"]) == 5
    assert max(worst.values()) <= TOLERANCE, worst


def test_nvcaffe_dialect_fp16_raw_weights_and_scale_bias(tmp_path):
    net, worst = run_both(NVCAFFE_NET, without_fields(NVCAFFE_NET, NVCAFFE_ONLY), tmp_path,
                          ["conv1", "fc"], weights_writer=as_nvcaffe_fp16)
    # The weights Crema computed with are the FLOAT16 values of the file.
    weights = net.params["conv1"][0].data
    assert np.array_equal(weights, weights.astype(np.float16).astype(np.float32))
    assert max(worst.values()) <= TOLERANCE, worst


def test_intel_dialect_engine_strings(tmp_path):
    opencv_text = without_fields(INTEL_NET, ("engine",))
    net, worst = run_both(INTEL_NET, opencv_text, tmp_path, ["pool1"])
    assert max(worst.values()) <= TOLERANCE, worst
