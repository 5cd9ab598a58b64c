"""The forks' deploy nets of models/ (issue 31) computed by Crema and by
OpenCV 4.6's Caffe importer (cv2.dnn.readNetFromCaffe) agree.

Each net, at a small size, gets seeded random weights, which Crema saves; both
run on one fixed input. Where OpenCV's importer lacks a fork's type or computes
it otherwise, OpenCV reads an equivalent prototxt made from the net's own by
fork_nets.opencv_prototxt (each rewrite states its rule there), and a
caffemodel made from the one Crema saved by regrouping the BN layers' blobs.
An output whose layers OpenCV cannot compute at all (SegNet's Upsample) is
listed as not runnable.

Measure: largest |OpenCV - Crema| over largest |Crema|, at most 1e-4.
DetectionOutput rows are compared as sets: OpenCV orders them by score and
pads with zero rows. OpenCV's Proposal always gives post_nms_topn rows (zeros
after the K proposals): the first K rows are compared, and everything
computed from them.

CREMA_OPENCV_TABLE=<file> writes the results as a Markdown table.
"""
import os
import pathlib

import numpy as np
import pytest

crema = pytest.importorskip("crema")
cv2 = pytest.importorskip("cv2")
from crema.proto import crema_pb2  # noqa: E402

import fork_nets  # noqa: E402
from opencv_reference import compare, detections  # noqa: E402

TOLERANCE = 1e-4
SEED = 1701
ROWS = []  # (net, layers covered, output, max rel diff or None, note)

# The blobs compared per net; those OpenCV cannot compute, with the reason.
OUTPUTS = {
    "mobilenet_v1": ["fc7", "prob"],
    "mobilenet_v2": ["fc10", "prob"],
    "mobilenet_ssd": ["detection_out"],
    "ssd_face": ["detection_out"],
    "shufflenet": ["fc", "prob"],
    "faster_rcnn": ["rois", "cls_prob", "bbox_pred"],
    "rfcn": ["rois", "cls_prob", "bbox_pred"],
    "segmentation": ["score_aux"],
}
NOT_RUNNABLE = {
    "segmentation": {"score": "not runnable: Upsample (SegNet max unpooling) has no OpenCV "
                              "Caffe layer; the ONNX column covers it"},
}
PROPOSAL_NETS = ("faster_rcnn", "rfcn")


@pytest.fixture(scope="module", autouse=True)
def results_table():
    yield
    path = os.environ.get("CREMA_OPENCV_TABLE")
    if path:
        pathlib.Path(path).write_text(markdown(ROWS))


def markdown(rows):
    lines = ["| net | layers covered | output | max rel diff | note |",
             "|---|---|---|---|---|"]
    for net, layers, output, worst, note in rows:
        value = "—" if worst is None else "%.1e" % worst
        lines.append("| %s | %s | %s | %s | %s |" % (net, layers, output, value, note))
    return "\n".join(lines) + "\n"


def inputs_for(net, rng):
    values = {"data": rng.normal(0, 1, net.blobs["data"].data.shape).astype(np.float32)}
    if "im_info" in net.inputs:
        height, width = net.blobs["data"].data.shape[2:]
        values["im_info"] = np.array([[height, width, 1.0]], dtype=np.float32)
    return values


def run_crema(name, text, tmp_path):
    crema.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    model = tmp_path / "deploy.prototxt"
    model.write_text(text)
    net = crema.Net(str(model), crema.TEST)
    fork_nets.randomize(net, rng, fork_nets.HEAD_SCALES.get(name))
    weights = tmp_path / "weights.caffemodel"
    net.save(str(weights))
    inputs = inputs_for(net, rng)
    net.forward(**inputs)
    return net, weights, inputs


def proposals_unfiltered(text, weights, inputs, rois, tmp_path):
    """Crema's net with its Python proposal layer as a Proposal of min_size 0
    gives the same rois: min_size filtered nothing on these inputs, which
    OpenCV's Proposal (no min_size filter) needs to compare."""
    proposal = ('type: "Proposal"\n  bottom: "rpn_cls_prob_reshape"\n  bottom: "rpn_bbox_pred"\n'
                '  bottom: "im_info"\n  top: "rois"\n'
                '  proposal_param { feat_stride: 16 min_size: 0 }')
    start = text.index('type: "Python"')
    end = text.index("}", text.index("python_param", start)) + 1
    model = tmp_path / "min_size_0.prototxt"
    model.write_text(text[:start] + proposal + text[end:])
    net = crema.Net(str(model), str(weights), crema.TEST)
    net.forward(end="proposal", **inputs)
    np.testing.assert_array_equal(net.blobs["rois"].data, rois)


def run_opencv(text, net, weights, inputs, outputs, tmp_path):
    shapes = {name: blob.data.shape for name, blob in net.blobs.items()}
    prototxt, notes = fork_nets.opencv_prototxt(text, shapes, crema_pb2, outputs)
    model = tmp_path / "opencv.prototxt"
    model.write_text(prototxt)
    kinds = {name: layer.type for name, layer in net.layer_dict.items()}
    caffemodel = tmp_path / "opencv.caffemodel"
    fork_nets.opencv_caffemodel(weights, kinds, crema_pb2, caffemodel)
    runtime = cv2.dnn.readNetFromCaffe(str(model), str(caffemodel))
    for name, value in inputs.items():
        runtime.setInput(value, name)
    layers = [fork_nets.producer(prototxt, output, crema_pb2) for output in outputs]
    return dict(zip(outputs, runtime.forward(layers))), notes


# What else a row needs said, by net and output.
REMARKS = {
    ("shufflenet", "prob"): "prob saturates (one-hot): fc is the real check",
    ("segmentation", "score_aux"): "the encoder and aux head only (BN PSPNet, Interp's "
                                   "shrink, size and second-bottom forms)",
}


def note_text(name, output, notes, proposals, detections_kept):
    parts = ["OpenCV side: %s (%d layers)" % (note, count) for note, count in notes.items()]
    if name == "shufflenet":
        parts.append("batch 1: OpenCV's Axpy fails for batch > 1")
    if detections_kept is not None:
        parts.append("%d detections, compared as sorted sets" % detections_kept)
    if (name, output) in REMARKS:
        parts.append(REMARKS[(name, output)])
    if proposals is not None:
        parts.append("first %d rois (OpenCV pads to post_nms_topn); Crema's min_size 16 "
                     "filters none here (checked against min_size 0)" % proposals)
    return "; ".join(parts) if parts else "as is"


@pytest.mark.parametrize("name", list(fork_nets.NETS))
def test_fork_net_matches_opencv(name, tmp_path):
    text = fork_nets.deploy_text(name)
    net, weights, inputs = run_crema(name, text, tmp_path)
    outputs = OUTPUTS[name]
    proposals = None
    if name in PROPOSAL_NETS:
        rois = net.blobs["rois"].data.copy()
        proposals = len(rois)
        assert proposals > 0
        proposals_unfiltered(text, weights, inputs, rois, tmp_path)
    got, notes = run_opencv(text, net, weights, inputs, outputs, tmp_path)
    layers = ", ".join(fork_nets.layer_types(text, crema_pb2))
    worst = {}
    for output in outputs:
        expected = net.blobs[output].data
        worst[output] = compare(output, got[output], expected, proposals)
        kept = len(detections(expected, -1)) if output == "detection_out" else None
        note = note_text(name, output, notes, proposals, kept)
        ROWS.append((name, layers, output, worst[output], note))
        print("%-13s %-14s max |opencv - crema| / max |crema| = %.2e" %
              (name, output, worst[output]))
    for output, reason in NOT_RUNNABLE.get(name, {}).items():
        ROWS.append((name, layers, output, None, reason))
        print("%-13s %-14s %s" % (name, output, reason))
    for output, value in worst.items():
        assert value <= TOLERANCE, (name, output, value)
