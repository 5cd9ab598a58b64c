"""The forks' deploy nets of models/ (issue 31) for the Python tests: each
net's prototxt at a small size, seeded random weights that keep it finite,
and, for OpenCV 4.6's Caffe importer, an equivalent prototxt and caffemodel.

OpenCV's importer lacks some of the forks' types or parameter messages, or
computes a type otherwise. opencv_prototxt rewrites those layers into what
OpenCV computes identically (each rewrite is one function below, with the
rule that makes it equal); a layer with no equivalent raises NoEquivalent.
"""
import ast
import importlib.util
import pathlib

import numpy as np
from google.protobuf import text_format

MODELS = pathlib.Path(__file__).resolve().parents[2] / "models"

# name: keyword arguments of models/<name>/make_<name>.py's function at the
# test's small size. Batch 1 for shufflenet: OpenCV's Axpy (its importer
# makes it a Scale by a second bottom at axis 1) takes one set of channel
# weights for the whole batch.
NETS = {
    "mobilenet_v1": dict(batch=2, size=64, depthwise="Convolution"),
    "mobilenet_v2": dict(batch=2, size=64, depthwise="DepthwiseConvolution"),
    "mobilenet_ssd": dict(batch=2, size=96),
    "ssd_face": dict(batch=1, size=300),
    "shufflenet": dict(batch=1, size=64),
    "faster_rcnn": dict(size=96),
    "rfcn": dict(size=96),
    "segmentation": dict(batch=2, size=32),
}

# Heads whose He-scaled weights would saturate what follows them, by net:
# SSD face's two-class confidences (softmax scores all 1, tied, which leaves
# the keep_top_k cut to the tie order) and the RPN's box deltas (boxes
# collapsed on the image's border, all under min_size); their weights are
# scaled down by these factors (layer name suffix: factor).
HEAD_SCALES = {
    "ssd_face": {"_mbox_conf": 0.02},
    "faster_rcnn": {"rpn_bbox_pred": 0.02},
    "rfcn": {"rpn_bbox_pred": 0.02},
}


class NoEquivalent(Exception):
    """A layer that OpenCV 4.6's Caffe importer cannot compute as the fork does."""


def deploy_text(name):
    """The net's deploy prototxt, written by models/<name>/make_<name>.py."""
    path = MODELS / name / ("make_%s.py" % name)
    spec = importlib.util.spec_from_file_location("make_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)(**NETS[name])


def is_segnet_bn(blobs):
    """SegNet's BN holds scale and shift; PSPNet's slope, bias, mean, variance."""
    return len(blobs) == 2


def _he(rng, shape):
    fan_in = int(np.prod(shape[1:]))
    return rng.normal(0, np.sqrt(2.0 / fan_in), shape)


def _head_scale(name, scales):
    return next((s for suffix, s in scales.items() if name.endswith(suffix)), 1.0)


def randomize(net, rng, head_scales=None):
    """Seeded random weights: He-scaled filters and small biases (heads
    scaled down, HEAD_SCALES); BatchNorm statistics stored as sums with a
    scale factor of 7 (positive variances); BN statistics with positive
    variances and slopes near 1; Scale near 1; Normalize's scales near 20."""
    for name, blobs in net.params.items():
        kind = net.layer_dict[name].type
        shapes = [blob.data.shape for blob in blobs]
        if kind == "BatchNorm":
            channels = shapes[0][0]
            values = [rng.normal(0, 0.5, channels) * 7, rng.uniform(0.5, 2.0, channels) * 7,
                      7.0]
        elif kind == "BN" and is_segnet_bn(blobs):
            values = [rng.uniform(0.8, 1.2, shapes[0]), rng.normal(0, 0.1, shapes[1])]
        elif kind == "BN":
            values = [rng.uniform(0.8, 1.2, shapes[0]), rng.normal(0, 0.1, shapes[1]),
                      rng.normal(0, 0.5, shapes[2]), rng.uniform(0.5, 2.0, shapes[3])]
        elif kind == "Scale":
            values = ([rng.uniform(0.8, 1.2, shapes[0])] +
                      [rng.normal(0, 0.1, s) for s in shapes[1:]])
        elif kind == "Normalize":
            values = [20 + rng.normal(0, 1, shapes[0])]
        else:
            scale = _head_scale(name, head_scales or {})
            values = [_he(rng, s) * scale if len(s) > 1 else rng.normal(0, 0.1, s)
                      for s in shapes]
        for blob, value in zip(blobs, values):
            blob.data[...] = value


def parse(text, pb2):
    net = pb2.NetParameter()
    text_format.Merge(text, net)
    return net


# --- Rewrites for OpenCV's importer: each returns the layers that replace one.

def _depthwise(layer, shapes):
    """DepthwiseConvolution is unknown to OpenCV: the same weights as a
    Convolution with group = the bottom's channels."""
    layer.type = "Convolution"
    layer.convolution_param.group = shapes[layer.bottom[0]][1]
    return [layer], "DepthwiseConvolution as Convolution with group = channels"


def _shuffle(layer, shapes):
    """OpenCV's ShuffleChannel reads `group`, but its schema has no
    shuffle_channel_param: the importer copies convolution_param's fields into
    the layer's settings, so the group travels there."""
    group = layer.shuffle_channel_param.group
    layer.ClearField("shuffle_channel_param")
    layer.convolution_param.group = group
    return [layer], "ShuffleChannel's group passed in convolution_param"


def _axpy(layer, shapes):
    """OpenCV computes a * (third bottom) + (second bottom), the SENet fork
    a * (second) + (third): the two swap."""
    layer.bottom[1], layer.bottom[2] = layer.bottom[2], layer.bottom[1]
    return [layer], "Axpy's bottoms 2 and 3 swapped (OpenCV scales the third)"


def _interp(layer, shapes):
    """OpenCV's schema has no interp_param and its Interp takes one bottom,
    but it reads `height` and `width` from any message and resizes as the fork
    does (bilinear, corners aligned): every size rule of the fork becomes
    explicit, computed here from the fork's rule (no crop: OpenCV has none)."""
    p = layer.interp_param
    if p.pad_beg or p.pad_end:
        raise NoEquivalent("Interp with pad_beg/pad_end (OpenCV's Interp cannot crop)")
    height, width = shapes[layer.bottom[0]][2:4]
    if len(layer.bottom) > 1:
        height, width = shapes[layer.bottom[1]][2:4]
    elif p.shrink_factor != 1 or p.zoom_factor != 1:
        height, width = [(n - 1) // p.shrink_factor + 1 for n in (height, width)]
        height, width = [n + (n - 1) * (p.zoom_factor - 1) for n in (height, width)]
    else:
        height, width = p.height, p.width
    del layer.bottom[1:]
    layer.ClearField("interp_param")
    layer.memory_data_param.height = height
    layer.memory_data_param.width = width
    return [layer], "Interp's size made explicit (memory_data_param height/width)"


def _bn(layer, shapes):
    """BN is unknown to OpenCV. PSPNet's (stored statistics) is BatchNorm
    with a scale factor of 1 and the same eps, then Scale with bias (slope,
    bias); SegNet's INFERENCE is a Scale with bias."""
    p = layer.bn_param
    segnet = p.HasField("scale_filler") or p.HasField("shift_filler") or p.HasField("bn_mode")
    layer.ClearField("bn_param")
    if segnet:
        if p.bn_mode != p.INFERENCE:
            raise NoEquivalent("SegNet BN in LEARN mode (batch statistics)")
        layer.type = "Scale"
        layer.scale_param.bias_term = True
        return [layer], "SegNet BN (INFERENCE) as Scale with bias"
    layer.type = "BatchNorm"
    layer.batch_norm_param.use_global_stats = True
    layer.batch_norm_param.eps = p.eps
    scale = type(layer)()
    scale.name = layer.name + OPENCV_SCALE
    scale.type = "Scale"
    scale.bottom.append(layer.top[0])
    scale.top.append(layer.top[0])
    scale.scale_param.bias_term = True
    return [layer, scale], "PSPNet BN as BatchNorm (factor 1) + Scale with bias"


def _python(layer, shapes):
    """OpenCV cannot build the Python rpn.proposal_layer; its own Proposal
    (proposal_param) has the same TEST defaults but never filters by
    min_size, so the comparison needs inputs where Crema filters nothing."""
    if layer.python_param.module != "rpn.proposal_layer":
        raise NoEquivalent("Python layer %s" % layer.python_param.module)
    settings = ast.literal_eval("{%s}" % layer.python_param.param_str.strip("{}"))
    layer.type = "Proposal"
    layer.ClearField("python_param")
    layer.proposal_param.feat_stride = settings["feat_stride"]
    # OpenCV has no defaults for these: py-faster-rcnn's are written out.
    layer.proposal_param.scale.extend(settings.get("scales", [8, 16, 32]))
    layer.proposal_param.ratio.extend(settings.get("ratios", [0.5, 1, 2]))
    return [layer], "Python rpn.proposal_layer as Proposal (OpenCV: no min_size filter)"


def _upsample(layer, shapes):
    raise NoEquivalent("Upsample (SegNet's max unpooling): no OpenCV Caffe layer")


OPENCV_SCALE = "/opencv_scale"
REWRITES = {"DepthwiseConvolution": _depthwise, "ShuffleChannel": _shuffle, "Axpy": _axpy,
            "Interp": _interp, "BN": _bn, "Python": _python, "Upsample": _upsample}


def producer(prototxt, blob, pb2):
    """The name of the last layer that writes `blob` (OpenCV names outputs by layer)."""
    return [layer.name for layer in parse(prototxt, pb2).layer if blob in layer.top][-1]


def _needed_layers(net, outputs):
    """The layers that the blobs `outputs` depend on, in order."""
    needed, keep = set(outputs), []
    for layer in reversed(net.layer):
        if needed & set(layer.top):
            keep.append(layer)
            needed |= set(layer.bottom)
    return keep[::-1]


def opencv_prototxt(text, shapes, pb2, outputs):
    """OpenCV's equivalent of the net in `text`, for the blobs `outputs` (the
    layers nothing of them needs are left out); shapes: blob name -> shape.
    Returns (prototxt, {rewrite note: number of layers})."""
    net = parse(text, pb2)
    layers = _needed_layers(net, outputs)
    notes = {}
    del net.layer[:]
    for layer in layers:
        rewrite = REWRITES.get(layer.type)
        if rewrite is None:
            net.layer.add().CopyFrom(layer)
            continue
        replaced, note = rewrite(layer, shapes)
        notes[note] = notes.get(note, 0) + 1
        for new in replaced:
            net.layer.add().CopyFrom(new)
    return text_format.MessageToString(net), notes


def _blob(pb2, values):
    blob = pb2.BlobProto()
    values = np.asarray(values, dtype=np.float32).ravel()
    blob.shape.dim.append(values.size)
    blob.data.extend(values.tolist())
    return blob


def opencv_caffemodel(saved, kinds, pb2, out):
    """Rewrites the caffemodel Crema saved (path `saved`) for the OpenCV
    prototxt: blobs only, by layer name; a PSPNet BN's four blobs become
    BatchNorm's (mean, variance, factor 1) and its Scale's (slope, bias), a
    SegNet BN's two a Scale's. kinds: layer name -> type."""
    source = pb2.NetParameter()
    source.ParseFromString(pathlib.Path(saved).read_bytes())
    target = pb2.NetParameter()
    for layer in source.layer:
        if not layer.blobs:
            continue
        arrays = [np.array(b.data, dtype=np.float32) for b in layer.blobs]
        groups = [(layer.name, layer.blobs)]
        if kinds.get(layer.name) == "BN" and len(arrays) == 4:
            groups = [(layer.name, [_blob(pb2, arrays[2]), _blob(pb2, arrays[3]),
                                    _blob(pb2, [1.0])]),
                      (layer.name + OPENCV_SCALE, [_blob(pb2, arrays[0]), _blob(pb2, arrays[1])])]
        elif kinds.get(layer.name) == "BN":
            groups = [(layer.name, [_blob(pb2, a) for a in arrays])]
        for name, blobs in groups:
            copy = target.layer.add()
            copy.name = name
            for blob in blobs:
                copy.blobs.add().CopyFrom(blob)
    pathlib.Path(out).write_bytes(target.SerializeToString())


def layer_types(text, pb2):
    """The net's layer types in order of first appearance, Input left out."""
    seen = []
    for layer in parse(text, pb2).layer:
        kind = layer.type
        if kind == "Python":
            kind = "Python (%s)" % layer.python_param.module
        if kind != "Input" and kind not in seen:
            seen.append(kind)
    return seen

