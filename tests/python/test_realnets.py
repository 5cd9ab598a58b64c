"""The published deploy nets of ../shared/realnets (issue 49), exactly as
their authors wrote them: each parses unchanged, builds, runs, and, where
OpenCV 4.6's Caffe importer runs it, matches OpenCV's outputs to 1e-4
relative (opencv_reference.py says how outputs are compared).

Both frameworks read the same unchanged deploy.prototxt and the same weights:
seeded random ones that Crema draws (fork_nets.randomize) and saves. The two
R-CNN files name py-faster-rcnn's Python proposal layer, which Crema builds
as its native Proposal and OpenCV gets as rcnn_proposal.py's numpy layer.

The files live outside the repository: without ../shared/realnets (or
CREMA_REALNETS_DIR) the tests skip, and under CI=true they fail.
CREMA_REALNETS_TABLE=<file> writes the results as a Markdown table.
"""
import os
import pathlib
import time

import numpy as np
import pytest

crema = pytest.importorskip("crema")
from crema.proto import crema_pb2  # noqa: E402

import fork_nets  # noqa: E402
import rcnn_proposal  # noqa: E402
from conftest import SHARED  # noqa: E402
from opencv_reference import compare, detections  # noqa: E402

REALNETS = pathlib.Path(os.environ.get("CREMA_REALNETS_DIR") or SHARED / "realnets")
NAMES = ["enet", "face_ssd_res10", "faster_rcnn_zf", "mobilenet_ssd", "mobilenet_v1",
         "mobilenet_v2", "mobilenetv2_ssdlite", "openpose_body25", "pspnet50_ade20k",
         "resnet50_he", "rfcn_resnet50", "shufflenet_v1_g3", "shufflenet_v2",
         "squeezenet_v1_1"]
TOLERANCE = 1e-4
SEED = 1949
PASSES = 3  # forward passes timed per framework (the median is reported)

# Inputs the file leaves to run time (OpenPose: "defined at runtime").
INPUT_SHAPES = {"openpose_body25": {"image": (1, 3, 184, 184)}}
# Why OpenCV 4.6 cannot read a file (its importer's schema lacks the fork's
# parameter messages).
OPENCV_CANNOT = {
    "enet": "OpenCV 4.6 cannot parse it (bn_param, upsample_param)",
    "pspnet50_ade20k": "OpenCV 4.6 cannot parse it (bn_param, interp_param)",
    "shufflenet_v1_g3": "OpenCV 4.6 cannot parse it (shuffle_channel_param)",
    "shufflenet_v2": "OpenCV 4.6 cannot parse it (shuffle_channel_param)",
}
# Heads whose He-scaled weights would saturate what follows (fork_nets.HEAD_SCALES).
HEAD_SCALES = {
    "face_ssd_res10": {"_mbox_conf": 0.02},
    "mobilenet_ssd": {"_mbox_conf": 3.0},
    "mobilenetv2_ssdlite": {"_mbox_conf": 0.1},
    "faster_rcnn_zf": {"rpn_bbox_pred": 0.02},
    "rfcn_resnet50": {"rpn_bbox_pred": 0.02},
}
# The logits before a classifier's softmax, compared as well: with random
# weights the probabilities are nearly one-hot, which hides differences.
LOGITS = {"mobilenet_v1": "fc7", "mobilenet_v2": "fc7", "resnet50_he": "fc1000",
          "squeezenet_v1_1": "pool10"}
ROWS = []  # (net, parsed, built, output, max rel diff or None, Crema ms, OpenCV ms, note)


@pytest.fixture(scope="module")
def realnets():
    if not (REALNETS / "squeezenet_v1_1" / "deploy.prototxt").is_file():
        if os.environ.get("CI") == "true":
            pytest.fail("the published nets are missing at %s (CI=true: they must be there)"
                        % REALNETS)
        pytest.skip("no published nets at %s (../shared/realnets beside the checkout, or "
                    "CREMA_REALNETS_DIR)" % REALNETS)
    return REALNETS


@pytest.fixture(scope="module", autouse=True)
def results_table():
    yield
    path = os.environ.get("CREMA_REALNETS_TABLE")
    if path:
        lines = ["| net | parsed | built | output | max rel diff vs OpenCV | Crema ms | "
                 "OpenCV ms | note |", "|---|---|---|---|---|---|---|---|"]
        for row in ROWS:
            net, parsed, built, output, worst, ours, theirs, note = row
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                net, parsed, built, output, "—" if worst is None else "%.1e" % worst,
                "%.1f" % ours, "—" if theirs is None else "%.1f" % theirs, note))
        pathlib.Path(path).write_text("\n".join(lines) + "\n")


def median_ms(run):
    times = []
    for _ in range(PASSES):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def make_inputs(net, rng):
    values = {}
    for name in net.inputs:
        shape = net.blobs[name].data.shape
        if name == "im_info":
            height, width = net.blobs["data"].data.shape[2:]
            values[name] = np.array([[height, width, 1.0]], dtype=np.float32)
        else:
            values[name] = rng.normal(0, 1, shape).astype(np.float32)
    return values


def run_crema(name, deploy, tmp_path):
    crema.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    net = crema.Net(str(deploy), crema.TEST)
    for blob, shape in INPUT_SHAPES.get(name, {}).items():
        net.blobs[blob].reshape(*shape)
    net.reshape()
    fork_nets.randomize(net, rng, HEAD_SCALES.get(name))
    weights = tmp_path / "weights.caffemodel"
    net.save(str(weights))
    inputs = make_inputs(net, rng)
    net.forward(**inputs)
    compared = list(net.outputs) + ([LOGITS[name]] if name in LOGITS else [])
    outputs = {output: net.blobs[output].data.copy() for output in compared}
    ms = median_ms(lambda: net.forward(**inputs))
    return net, weights, inputs, outputs, ms


def run_opencv(cv2, deploy, weights, inputs, outputs):
    rcnn_proposal.register_with_opencv(cv2)  # the R-CNN files' Python layers
    runtime = cv2.dnn.readNetFromCaffe(str(deploy), str(weights))
    text = deploy.read_text()
    layers = [fork_nets.producer(text, output, crema_pb2) for output in outputs]

    def forward():
        for blob, value in inputs.items():
            runtime.setInput(value, blob)
        return runtime.forward(layers)

    got = dict(zip(outputs, forward()))
    return got, median_ms(forward)


@pytest.mark.parametrize("name", NAMES)
def test_published_net(name, realnets, tmp_path):
    deploy = realnets / name / "deploy.prototxt"
    fork_nets.parse(deploy.read_text(), crema_pb2)  # Crema's schema reads the file unchanged
    net, weights, inputs, outputs, ours = run_crema(name, deploy, tmp_path)
    for output, value in outputs.items():
        assert np.isfinite(value).all(), (name, output, "not finite")
    if name in OPENCV_CANNOT:
        for output in outputs:
            ROWS.append((name, "yes", "yes", output, None, ours, None, OPENCV_CANNOT[name]))
        return
    cv2 = pytest.importorskip("cv2")
    got, theirs = run_opencv(cv2, deploy, weights, inputs, list(outputs))
    proposals = len(net.blobs["rois"].data) if "rois" in net.blobs else None
    worst = {}
    for output, expected in outputs.items():
        worst[output] = compare(output, got[output], expected, proposals)
        note = []
        if output == "detection_out":
            note.append("%d detections, as sorted sets" % len(detections(expected, -1)))
        if proposals is not None:
            note.append("first %d rois' rows (OpenCV pads to 300)" % proposals)
        ROWS.append((name, "yes", "yes", output, worst[output], ours, theirs,
                     "; ".join(note) or "as is"))
        print("%-20s %-14s max |opencv - crema| / max |crema| = %.2e; %.1f ms, OpenCV %.1f ms"
              % (name, output, worst[output], ours, theirs))
    for output, value in worst.items():
        assert value <= TOLERANCE, (name, output, value)
