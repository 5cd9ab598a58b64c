"""`crema export` of the forks' layers (SSD, MobileNet, ShuffleNet,
segmentation, Faster R-CNN): each net, with random seeded weights, is
exported by the tool, checked by onnx.checker, and run by two runtimes on the
same input as Crema: ONNX Runtime (onnxruntime-node, the `onnxruntime`
fixture) and OpenCV 4.6's ONNX importer. Each output must agree with Crema's
to 1e-4: the largest |runtime - Crema| over the largest |Crema|.
DetectionOutput's rows are compared as sets (sorted by image, label and
score), since the exported model may order them otherwise.

Where OpenCV's importer cannot run an op of a net, that net's OpenCV test
skips and says why (OPENCV_CANNOT); it still runs OpenCV, so a reason that no
longer holds shows up as a pass or a failure.

Run with -s to see one results line per net and runtime.
"""
import re
import subprocess
import sys

import numpy as np
import pytest

crema = pytest.importorskip("crema")
onnx = pytest.importorskip("onnx")
cv2 = pytest.importorskip("cv2")

from conftest import SOURCE  # noqa: E402

TOLERANCE = 1e-4
RUNTIMES = ["onnxruntime", "opencv"]


def input_layer(name, shape):
    dims = " ".join("dim: %d" % d for d in shape)
    return 'layer { name: "%s" type: "Input" top: "%s" input_param { shape { %s } } }\n' % (
        name, name, dims)


def conv(name, bottom, outputs, kernel=3, pad=1, extra=""):
    return ('layer { name: "%s" type: "Convolution" bottom: "%s" top: "%s" convolution_param '
            '{ num_output: %d kernel_size: %d pad: %d %s } }\n' % (name, bottom, name, outputs,
                                                                    kernel, pad, extra))


def ssd_net(images, detection_param, loc_classes=1, classes=4):
    """A tiny SSD head: two feature maps, their loc/conf convolutions
    permuted and flattened, PriorBoxes, softmaxed confidences, DetectionOutput."""
    text = input_layer("data", [images, 3, 32, 32]) + conv("f1", "data", 8, extra="stride: 4")
    text += conv("f2", "f1", 8, extra="stride: 2")
    locs, confs, priors = [], [], []
    for feature, min_size, max_size in (("f1", 6, 12), ("f2", 12, 24)):
        per_cell = 4  # min, sqrt(min * max), ratio 2 and 1/2
        for what, width, names in (("loc", 4 * loc_classes, locs), ("conf", classes, confs)):
            head = "%s_%s" % (feature, what)
            text += conv(head, feature, per_cell * width)
            text += ('layer { name: "%s_perm" type: "Permute" bottom: "%s" top: "%s_perm" '
                     'permute_param { order: 0 order: 2 order: 3 order: 1 } }\n' % (head, head,
                                                                                    head))
            text += ('layer { name: "%s_flat" type: "Flatten" bottom: "%s_perm" top: "%s_flat" }\n'
                     % (head, head, head))
            names.append(head + "_flat")
        text += ('layer { name: "%s_prior" type: "PriorBox" bottom: "%s" bottom: "data" '
                 'top: "%s_prior" prior_box_param { min_size: %d max_size: %d aspect_ratio: 2 '
                 'flip: true variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 } }\n'
                 % (feature, feature, feature, min_size, max_size))
        priors.append(feature + "_prior")

    def concat(name, bottoms, axis):
        tops = " ".join('bottom: "%s"' % b for b in bottoms)
        return ('layer { name: "%s" type: "Concat" %s top: "%s" concat_param { axis: %d } }\n'
                % (name, tops, name, axis))
    text += concat("loc", locs, 1) + concat("conf", confs, 1) + concat("prior", priors, 2)
    text += ('layer { name: "conf_reshape" type: "Reshape" bottom: "conf" top: "conf_reshape" '
             'reshape_param { shape { dim: 0 dim: -1 dim: %d } } }\n' % classes)
    text += ('layer { name: "conf_softmax" type: "Softmax" bottom: "conf_reshape" '
             'top: "conf_softmax" softmax_param { axis: 2 } }\n')
    text += ('layer { name: "conf_flat" type: "Flatten" bottom: "conf_softmax" top: "conf_flat" }\n')
    text += ('layer { name: "detection" type: "DetectionOutput" bottom: "loc" bottom: "conf_flat" '
             'bottom: "prior" top: "detection" detection_output_param { num_classes: %d %s } }\n'
             % (classes, detection_param))
    return text


MOBILE = input_layer("data", [1, 6, 7, 7]) + conv("conv", "data", 6)
SEGMENTATION_INPUT = input_layer("data", [1, 3, 9, 11]) + conv("conv", "data", 4)
BN_PARAMS = {
    "pspnet": "bn_param { eps: 1e-4 frozen: true }",
    "segnet": "bn_param { scale_filler { type: 'constant' value: 1 } bn_mode: INFERENCE }",
}

# name -> (prototxt, inputs {name: generator(rng, shape)} where not N(0, 1)).
LAYER_NETS = {
    "ReLU6": (MOBILE + 'layer { name: "r6" type: "ReLU6" bottom: "conv" top: "r6" }\n', {}),
    "ShuffleChannel": (
        MOBILE + 'layer { name: "shuffle" type: "ShuffleChannel" bottom: "conv" top: "shuffle" '
        'shuffle_channel_param { group: 3 } }\n', {}),
    "ConvolutionDepthwise": (
        MOBILE + 'layer { name: "dw" type: "ConvolutionDepthwise" bottom: "conv" top: "dw" '
        'convolution_param { num_output: 6 kernel_size: 3 pad: 1 stride: 2 } }\n'
        'layer { name: "dw2" type: "DepthwiseConvolution" bottom: "dw" top: "dw2" '
        'convolution_param { num_output: 12 kernel_size: 3 dilation: 2 pad: 2 bias_term: false } }\n',
        {}),
    "Axpy": (
        MOBILE + conv("y", "data", 6) +
        'layer { name: "squeeze" type: "Pooling" bottom: "conv" top: "squeeze" '
        'pooling_param { pool: AVE global_pooling: true } }\n'
        + conv("excite", "squeeze", 6, kernel=1, pad=0) +
        'layer { name: "gate" type: "Sigmoid" bottom: "excite" top: "gate" }\n'
        'layer { name: "axpy" type: "Axpy" bottom: "gate" bottom: "conv" bottom: "y" '
        'top: "axpy" }\n', {}),
    "Permute": (
        input_layer("data", [2, 3, 4, 5]) +
        'layer { name: "nhwc" type: "Permute" bottom: "data" top: "nhwc" '
        'permute_param { order: 0 order: 2 order: 3 order: 1 } }\n'
        'layer { name: "partial" type: "Permute" bottom: "data" top: "partial" '
        'permute_param { order: 3 } }\n', {}),
    "Normalize across_spatial shared": (
        MOBILE + 'layer { name: "norm" type: "Normalize" bottom: "conv" top: "norm" '
        'norm_param { eps: 1e-6 } }\n', {}),
    "Normalize per position per channel": (
        MOBILE + 'layer { name: "norm" type: "Normalize" bottom: "conv" top: "norm" '
        'norm_param { across_spatial: false channel_shared: false eps: 1e-3 } }\n', {}),
    "PriorBox": (
        input_layer("data", [1, 3, 30, 20]) + conv("f", "data", 4, extra="stride: 4") +
        'layer { name: "prior" type: "PriorBox" bottom: "f" bottom: "data" top: "prior" '
        'prior_box_param { min_size: 8 max_size: 16 aspect_ratio: 2 aspect_ratio: 3 '
        'clip: true variance: 0.1 variance: 0.2 variance: 0.3 variance: 0.4 } }\n'
        'layer { name: "flat" type: "Reshape" bottom: "f" top: "flat" '
        'reshape_param { shape { dim: 1 dim: 2 dim: -1 } } }\n'
        'layer { name: "both" type: "Concat" bottom: "flat" bottom: "prior" top: "both" '
        'concat_param { axis: 2 } }\n', {}),
    "DetectionOutput shared CENTER_SIZE top_k keep_top_k": (
        ssd_net(1, "share_location: true background_label_id: 0 code_type: CENTER_SIZE "
                   "nms_param { nms_threshold: 0.45 top_k: 20 } keep_top_k: 15 "
                   "confidence_threshold: 0.2"), {}),
    "DetectionOutput per-class CORNER batch 2": (
        ssd_net(2, "share_location: false background_label_id: 1 code_type: CORNER "
                   "nms_param { nms_threshold: 0.3 }", loc_classes=4), {}),
    "DetectionOutput CORNER_SIZE encoded keep_top_k batch 2": (
        ssd_net(2, "background_label_id: -1 code_type: CORNER_SIZE variance_encoded_in_target: "
                   "true nms_param { nms_threshold: 0.5 eta: 0.9 top_k: 12 } keep_top_k: 9 "
                   "confidence_threshold: 0.1"), {}),
    "Interp zoom and crop": (
        SEGMENTATION_INPUT + 'layer { name: "interp" type: "Interp" bottom: "conv" top: "interp" '
        'interp_param { zoom_factor: 3 pad_beg: -1 pad_end: -2 } }\n', {}),
    "Interp shrink, size, second bottom": (
        SEGMENTATION_INPUT +
        'layer { name: "shrink" type: "Interp" bottom: "conv" top: "shrink" '
        'interp_param { shrink_factor: 2 } }\n'
        'layer { name: "sized" type: "Interp" bottom: "shrink" top: "sized" '
        'interp_param { height: 7 width: 4 } }\n'
        'layer { name: "like" type: "Interp" bottom: "sized" bottom: "data" top: "like" }\n', {}),
    "Upsample by pooling mask": (
        SEGMENTATION_INPUT +
        'layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool" top: "mask" '
        'pooling_param { pool: MAX kernel_size: 2 stride: 2 } }\n'
        'layer { name: "up" type: "Upsample" bottom: "pool" bottom: "mask" top: "up" '
        'upsample_param { scale: 2 pad_out_h: true } }\n', {}),
    "Upsample to another plane size": (
        SEGMENTATION_INPUT +
        'layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool" top: "mask" '
        'pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1 } }\n'
        'layer { name: "mask_copy" type: "Power" bottom: "mask" top: "mask_copy" }\n'
        'layer { name: "up" type: "Upsample" bottom: "pool" bottom: "mask" top: "up" '
        'upsample_param { upsample_h: 12 upsample_w: 13 } }\n', {}),
    "BN PSPNet": (
        SEGMENTATION_INPUT + 'layer { name: "bn" type: "BN" bottom: "conv" top: "bn" %s }\n'
        % BN_PARAMS["pspnet"], {}),
    "BN SegNet INFERENCE": (
        SEGMENTATION_INPUT + 'layer { name: "bn" type: "BN" bottom: "conv" top: "bn" %s }\n'
        % BN_PARAMS["segnet"], {}),
    "YOLO Upsample nearest, Reorg, Mish": (
        input_layer("data", [2, 4, 6, 8]) + conv("conv", "data", 8) +
        'layer { name: "mish" type: "Mish" bottom: "conv" top: "mish" }\n'
        'layer { name: "up" type: "Upsample" bottom: "mish" top: "up" '
        'upsample_param { scale: 2 } }\n'
        'layer { name: "reorg" type: "Reorg" bottom: "up" top: "reorg" '
        'reorg_param { stride: 2 } }\n', {}),
    "YOLO Reorg reverse": (
        input_layer("data", [2, 16, 3, 4]) +
        'layer { name: "back" type: "Reorg" bottom: "data" top: "back" '
        'reorg_param { stride: 2 reverse: true } }\n', {}),
    "BatchNorm scale_bias": (
        MOBILE + 'layer { name: "bn_sb" type: "BatchNorm" bottom: "conv" top: "bn_sb" '
        'batch_norm_param { scale_bias: true } }\n', {}),
    "ROIPooling": (
        input_layer("data", [2, 3, 32, 32]) + input_layer("rois", [5, 5]) +
        conv("conv", "data", 4, extra="stride: 2") +
        'layer { name: "pool" type: "ROIPooling" bottom: "conv" bottom: "rois" top: "pool" '
        'roi_pooling_param { pooled_h: 3 pooled_w: 2 spatial_scale: 0.5 } }\n',
        {"rois": lambda rng, shape: random_rois(rng, shape[0], images=2, size=32)}),
}


def random_rois(rng, count, images, size):
    corners = np.sort(rng.uniform(0, size - 1, (count, 2, 2)), axis=2)
    rois = np.zeros((count, 5), np.float32)
    rois[:, 0] = rng.integers(0, images, count)
    rois[:, 1], rois[:, 3] = corners[:, 0, 0], corners[:, 0, 1]
    rois[:, 2], rois[:, 4] = corners[:, 1, 0], corners[:, 1, 1]
    return rois


# What OpenCV 4.6's ONNX importer cannot run, by net.
OPENCV_NMS = ("OpenCV 4.6's ONNX importer lacks NonMaxSuppression, so it cannot run "
              "DetectionOutput's graph (the error below is the first node it rejects)")
OPENCV_CLIP = ("OpenCV 4.6 reads Clip's bounds only from attributes (opset < 11), not from the "
               "inputs that carry them since opset 11 (ReLU6 is a Clip)")
OPENCV_UNPOOL = ("OpenCV 4.6's MaxUnpool does not run ONNX's: it takes indices within each [H, W] "
                 "plane, where ONNX (and ONNX Runtime) count them over the whole tensor")
OPENCV_CANNOT = {
    "ReLU6": OPENCV_CLIP,
    "mobilenet_v2": OPENCV_CLIP,
    "Upsample by pooling mask": OPENCV_UNPOOL,
    "Upsample to another plane size": OPENCV_UNPOOL,
    "segmentation": OPENCV_UNPOOL,
    "ROIPooling": "OpenCV 4.6's ONNX importer has no MaxRoiPool",
    "Normalize across_spatial shared": ("OpenCV 4.6's Div does not broadcast the per-image norm "
                                        "[N, 1, 1, 1] over [N, C, H, W]"),
    "DetectionOutput shared CENTER_SIZE top_k keep_top_k": OPENCV_NMS,
    "DetectionOutput per-class CORNER batch 2": OPENCV_NMS,
    "DetectionOutput CORNER_SIZE encoded keep_top_k batch 2": OPENCV_NMS,
    "mobilenet_ssd": OPENCV_NMS,
    "ssd_face": OPENCV_NMS,
}

FORK_MODELS = {  # model -> input size for make_<model>.py
    "mobilenet_v1": 64, "mobilenet_v2": 64, "shufflenet": 64, "segmentation": 64,
    "mobilenet_ssd": 96, "ssd_face": 288,
}


def randomize(net, rng):
    """Seeded random weights: He-scaled filters, small biases, scales near 1,
    BatchNorm and BN statistics with positive variances."""
    for name, blobs in net.params.items():
        kind = net.layer_dict[name].type
        if kind == "BatchNorm":
            channels, factor = blobs[0].data.shape[0], 7.0
            blobs[0].data[...] = rng.normal(0, 0.5, channels) * factor
            blobs[1].data[...] = rng.uniform(0.5, 2.0, channels) * factor
            blobs[2].data[...] = factor
            if len(blobs) == 5:  # the forks' scale_bias: a scale near 1, a shift
                blobs[3].data[...] = rng.uniform(0.5, 1.5, channels)
                blobs[4].data[...] = rng.normal(0, 0.1, channels)
        elif kind == "BN" and len(blobs) == 4:  # slope, bias, mean, variance
            shape = blobs[0].data.shape
            blobs[0].data[...] = rng.uniform(0.5, 1.5, shape)
            blobs[1].data[...] = rng.normal(0, 0.1, shape)
            blobs[2].data[...] = rng.normal(0, 0.5, shape)
            blobs[3].data[...] = rng.uniform(0.5, 2.0, shape)
        elif kind in ("BN", "Scale", "Normalize"):  # a scale near 1, then a shift
            blobs[0].data[...] = rng.uniform(0.5, 1.5, blobs[0].data.shape)
            for i in range(1, len(blobs)):
                blobs[i].data[...] = rng.normal(0, 0.1, blobs[i].data.shape)
        else:
            for blob in blobs:
                shape = blob.data.shape
                fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
                std = np.sqrt(2.0 / fan_in) if len(shape) > 1 else 0.1
                blob.data[...] = rng.normal(0, std, shape)


class Prepared:
    """A net exported once: the ONNX file, the inputs and Crema's outputs."""

    def __init__(self, label, text, generators, tool, directory):
        crema.set_random_seed(1701)
        rng = np.random.default_rng(1701)
        model = directory / "deploy.prototxt"
        model.write_text(text)
        net = crema.Net(str(model), crema.TEST)
        randomize(net, rng)
        weights = directory / "weights.caffemodel"
        net.save(str(weights))
        self.onnx = directory / "net.onnx"
        run = subprocess.run([tool, "export", "--model=%s" % model, "--weights=%s" % weights,
                              "--output=%s" % self.onnx], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        onnx.checker.check_model(onnx.load(str(self.onnx)))
        self.inputs = {}
        for name in net.inputs:
            shape = net.blobs[name].data.shape
            make = generators.get(name, lambda rng, shape: rng.normal(0, 1, shape))
            self.inputs[name] = np.asarray(make(rng, shape), np.float32)
        self.expected = {name: np.array(value)
                         for name, value in net.forward(**self.inputs).items()}
        self.label = label
        self.detection_outputs = {name for name in self.expected
                                  if net.layer_dict.get(name) is not None
                                  and net.layer_dict[name].type == "DetectionOutput"}


PREPARED = {}


@pytest.fixture(scope="module")
def prepare(crema_tool, tmp_path_factory):
    def get(label, text, generators):
        if label not in PREPARED:
            directory = tmp_path_factory.mktemp("onnx_forks")
            PREPARED[label] = Prepared(label, text, generators, crema_tool, directory)
        return PREPARED[label]
    return get


def sorted_rows(detections):
    """DetectionOutput rows [1, 1, M, 7] as an [M, 7] array in a fixed order:
    by image, label, descending score, then box."""
    rows = detections.reshape(-1, 7)
    keys = [rows[:, 6], rows[:, 5], rows[:, 4], rows[:, 3], -rows[:, 2], rows[:, 1], rows[:, 0]]
    return rows[np.lexsort(keys)]


def relative_difference(name, got, expected, detections):
    """max |got - expected| / max |expected|; DetectionOutput rows as sets.
    Crema's "nothing kept" rows (-1 but the image id) match zero rows."""
    if detections:
        got, expected = sorted_rows(got), sorted_rows(expected)
        if got.shape[0] == 0 and np.all(expected[:, 1:] == -1):
            return 0.0
        assert got.shape == expected.shape, "%s: %d rows, Crema %d" % (
            name, got.shape[0], expected.shape[0])
    else:
        assert got.size == expected.size, name
        got = got.reshape(expected.shape)
    return float(np.abs(got - expected).max() / np.abs(expected).max())


def run_runtime(runtime, prepared, onnxruntime):
    names = list(prepared.expected)
    if runtime == "onnxruntime":
        return dict(zip(names, onnxruntime.run(prepared.onnx, prepared.inputs, names)))
    net = cv2.dnn.readNetFromONNX(str(prepared.onnx))
    for name, value in prepared.inputs.items():
        net.setInput(value, name)
    return dict(zip(names, net.forward(names)))


def check(prepared, runtime, request):
    """Runs the exported net in `runtime` and compares every output."""
    onnxruntime = request.getfixturevalue("onnxruntime") if runtime == "onnxruntime" else None
    cannot = OPENCV_CANNOT.get(prepared.label) if runtime == "opencv" else None
    try:
        outputs = run_runtime(runtime, prepared, onnxruntime)
    except cv2.error as error:
        if cannot:
            lines = [line for line in str(error).splitlines() if "error" in line]
            pytest.skip("%s: %s (%s)" % (prepared.label, cannot, lines[-1].strip()))
        raise
    differences = {name: relative_difference(name, outputs[name], expected,
                                             name in prepared.detection_outputs)
                   for name, expected in prepared.expected.items()}
    rows = {name: " (%d rows)" % outputs[name].reshape(-1, 7).shape[0]
            for name in prepared.detection_outputs}
    print("\nRESULT | %s | %s | %s" % (prepared.label, runtime, ", ".join(
        "%s %.2e%s" % (name, difference, rows.get(name, ""))
        for name, difference in differences.items())))
    if cannot and max(differences.values()) > TOLERANCE:
        pytest.skip("%s: %s (it ran, %.2e off)" % (prepared.label, cannot,
                                                   max(differences.values())))
    for name, difference in differences.items():
        assert difference <= TOLERANCE, "%s %s: %.2e" % (prepared.label, name, difference)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("label", list(LAYER_NETS))
def test_fork_layer_exports_and_matches(label, runtime, prepare, request):
    text, generators = LAYER_NETS[label]
    prepared = prepare(label, "name: 'net'\n" + text, generators)
    if label.startswith("DetectionOutput"):
        detections = next(iter(prepared.expected.values()))
        assert detections.shape[2] > 1 and np.all(detections[0, 0, :, 1] >= 0), \
            "the test net should keep detections"
    check(prepared, runtime, request)


def fork_model_text(model, size):
    """make_<model>.py's net at `size`, without a classifier's final Softmax:
    with random weights the logits are large and the probabilities one-hot,
    which would hide differences; the logits show them."""
    script = SOURCE / "models" / model / ("make_%s.py" % model)
    text = subprocess.run([sys.executable, str(script), "--size", str(size)], check=True,
                          capture_output=True, text=True).stdout
    return re.sub(r'layer \{\n  name: "prob"\n  type: "Softmax"\n[^}]*\}\n', "", text)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("model", list(FORK_MODELS))
def test_fork_model_exports_and_matches(model, runtime, prepare, request):
    """The repository's fork models (models/*/make_*.py) at a small input size."""
    prepared = prepare(model, fork_model_text(model, FORK_MODELS[model]), {})
    check(prepared, runtime, request)
