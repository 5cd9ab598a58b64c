"""crema.detection: detect_ssd and read_labelmap on a tiny SSD net (one 8x8
feature map, 3 priors per cell, 3 classes) with random weights; the same
detections as `crema detect`; examples/detect runs."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import crema
from conftest import SOURCE

TINY_SSD = """name: "TinySSD"
layer { name: "data" type: "Input" top: "data"
        input_param { shape { dim: 1 dim: 3 dim: 64 dim: 64 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
        convolution_param { num_output: 8 kernel_size: 3 pad: 1 stride: 8
                            weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "loc" type: "Convolution" bottom: "conv" top: "loc"
        convolution_param { num_output: 12 kernel_size: 1
                            weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loc_perm" type: "Permute" bottom: "loc" top: "loc_perm"
        permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "loc_flat" type: "Flatten" bottom: "loc_perm" top: "loc_flat" }
layer { name: "conf" type: "Convolution" bottom: "conv" top: "conf"
        convolution_param { num_output: 9 kernel_size: 1
                            weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "conf_perm" type: "Permute" bottom: "conf" top: "conf_perm"
        permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "conf_flat" type: "Flatten" bottom: "conf_perm" top: "conf_flat" }
layer { name: "conf_reshape" type: "Reshape" bottom: "conf_flat" top: "conf_reshape"
        reshape_param { shape { dim: 0 dim: -1 dim: 3 } } }
layer { name: "conf_softmax" type: "Softmax" bottom: "conf_reshape" top: "conf_softmax"
        softmax_param { axis: 2 } }
layer { name: "conf_out" type: "Flatten" bottom: "conf_softmax" top: "conf_out" }
layer { name: "prior" type: "PriorBox" bottom: "conv" bottom: "data" top: "prior"
        prior_box_param { min_size: 16 aspect_ratio: 2 flip: true
                          variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 } }
layer { name: "detection_out" type: "DetectionOutput"
        bottom: "loc_flat" bottom: "conf_out" bottom: "prior" top: "detection_out"
        detection_output_param { num_classes: 3 share_location: true background_label_id: 0
                                 nms_param { nms_threshold: 0.45 top_k: 100 }
                                 code_type: CENTER_SIZE keep_top_k: 60
                                 confidence_threshold: 0.05 } }
"""
MEAN, SCALE = (104.0, 117.0, 123.0), 0.02


@pytest.fixture
def tiny_ssd(tmp_path):
    """The tiny SSD prototxt and a net of it with random weights (seed 3)."""
    path = tmp_path / "tiny_ssd.prototxt"
    path.write_text(TINY_SSD)
    crema.set_mode_cpu()
    crema.set_random_seed(3)
    return path, crema.Net(str(path), crema.TEST)


def random_image(height, width, seed=0):
    return np.random.RandomState(seed).uniform(0, 1, (height, width, 3)).astype(np.float32)


def ppm(path, image):
    """Writes an (H, W, 3) RGB image in [0, 1] as a binary PPM of its 8-bit
    values; returns the image those values are (what load_image reads)."""
    pixels = np.round(image * 255).astype(np.uint8)
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (pixels.shape[1], pixels.shape[0]) + pixels.tobytes())
    return pixels.astype(np.float32) / 255


def test_boxes_are_the_output_rows_in_pixels(tiny_ssd):
    _, net = tiny_ssd
    image = random_image(48, 80)
    found = crema.detection.detect_ssd(net, image, threshold=0.55, mean=MEAN, scale=SCALE)
    rows = net.blobs["detection_out"].data[0, 0]
    expected = rows[(rows[:, 1] >= 0) & (rows[:, 2] >= 0.55)]
    assert 0 < len(expected) < len(rows), "the threshold should keep some rows and drop some"
    np.testing.assert_array_equal(found.labels, expected[:, 1].astype(int))
    np.testing.assert_array_equal(found.scores, expected[:, 2])
    np.testing.assert_allclose(found.boxes, np.clip(expected[:, 3:7], 0, 1) * [80, 48, 80, 48],
                               rtol=1e-6)
    assert found.boxes.shape == (len(expected), 4) and found.boxes.dtype == np.float32
    assert np.all(found.boxes >= 0) and np.all(found.boxes[:, [0, 2]] <= 80)
    assert np.all(found.boxes[:, [1, 3]] <= 48)
    assert set(found.labels) <= {1, 2} and np.all(found.scores >= 0.55)
    boxes, scores, labels = found  # a namedtuple: unpacks as a tuple
    assert boxes is found.boxes and scores is found.scores and labels is found.labels


def test_input_is_ssd_deploy_preprocessing(tiny_ssd):
    """At the net's size no resize: the input is (BGR 0..255 - mean) * scale."""
    _, net = tiny_ssd
    image = random_image(64, 64, seed=1)
    crema.detection.detect_ssd(net, image, mean=MEAN, scale=SCALE)
    bgr = (image[:, :, ::-1] * 255).transpose(2, 0, 1)
    expected = (bgr - np.array(MEAN, np.float32)[:, None, None]) * SCALE
    np.testing.assert_allclose(net.blobs["data"].data[0], expected, rtol=1e-5, atol=1e-5)
    crema.detection.detect_ssd(net, image, mean=100.0)  # one mean for all channels, scale 1
    np.testing.assert_allclose(net.blobs["data"].data[0], bgr - 100, rtol=1e-5, atol=1e-4)


def test_reshapes_a_batch_input_to_one_image(tmp_path):
    path = tmp_path / "batch.prototxt"
    path.write_text(TINY_SSD.replace("dim: 1 dim: 3 dim: 64", "dim: 4 dim: 3 dim: 64"))
    crema.set_random_seed(3)
    net = crema.Net(str(path), crema.TEST)
    crema.detection.detect_ssd(net, random_image(64, 64), threshold=0.0)
    assert net.blobs["data"].data.shape == (1, 3, 64, 64)


def test_nothing_kept_gives_empty_arrays(tiny_ssd):
    _, net = tiny_ssd
    found = crema.detection.detect_ssd(net, random_image(40, 40), threshold=1.0, mean=MEAN,
                                       scale=SCALE)
    assert found.boxes.shape == (0, 4) and found.scores.shape == (0,) and len(found.labels) == 0


def test_same_detections_as_crema_detect(tiny_ssd, tmp_path, crema_tool):
    """On an image of the net's size (no resize: crema detect resizes 8-bit
    pixels, detect_ssd floats, which differ by rounding) the same lines."""
    path, net = tiny_ssd
    weights = tmp_path / "tiny_ssd.caffemodel"
    net.save(str(weights))
    image_path = tmp_path / "picture.ppm"
    image = ppm(image_path, random_image(64, 64, seed=2))
    found = crema.detection.detect_ssd(net, image, threshold=0.2, mean=MEAN, scale=SCALE)
    run = subprocess.run([crema_tool, "detect", "--model=%s" % path, "--weights=%s" % weights,
                          "--images=%s" % image_path, "--threshold=0.2",
                          "--mean_value=104,117,123", "--scale=%g" % SCALE],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, GLOG_minloglevel="1"))
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(lines) == len(found.scores) > 0
    for line, box, score, label in zip(lines, *found):
        assert line["image"] == str(image_path) and line["label"] == label
        assert line["name"] == str(label)  # no label map: the label's number
        assert line["score"] == pytest.approx(score, abs=1e-4)
        np.testing.assert_allclose(line["box"], box, atol=0.051)


def test_reads_a_file_name(tiny_ssd, tmp_path):
    _, net = tiny_ssd
    image_path = tmp_path / "picture.ppm"
    image = ppm(image_path, random_image(30, 30, seed=4))
    from_file = crema.detection.detect_ssd(net, str(image_path), threshold=0.2)
    from_array = crema.detection.detect_ssd(net, image, threshold=0.2)
    for a, b in zip(from_file, from_array):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kwargs, message", [
    (dict(threshold=1.5), "threshold must be in [0, 1], got 1.5"),
    (dict(threshold=-0.1), "threshold must be in [0, 1]"),
    (dict(scale=0), "scale must be a positive number"),
    (dict(mean=(1, 2)), "mean must be one number or 3"),
])
def test_bad_arguments(tiny_ssd, kwargs, message):
    _, net = tiny_ssd
    with pytest.raises(ValueError) as error:
        crema.detection.detect_ssd(net, random_image(20, 20), **kwargs)
    assert message in str(error.value)


def test_bad_images(tiny_ssd):
    _, net = tiny_ssd
    with pytest.raises(ValueError, match="OpenCV BGR uint8"):
        crema.detection.detect_ssd(net, np.zeros((20, 20, 3), np.uint8))
    with pytest.raises(ValueError, match="the image has 1 channels, the net input 3"):
        crema.detection.detect_ssd(net, np.zeros((20, 20, 1), np.float32))


def test_refuses_a_net_without_detection_output(tmp_path):
    path = tmp_path / "conv.prototxt"
    path.write_text(TINY_SSD.split('layer { name: "loc"')[0])
    net = crema.Net(str(path), crema.TEST)
    with pytest.raises(ValueError) as error:
        crema.detection.detect_ssd(net, random_image(64, 64))
    assert "'conv' has shape (1, 8, 8, 8), not (1, 1, N, 7)" in str(error.value)


def test_read_labelmap(tmp_path):
    path = tmp_path / "labelmap.prototxt"
    path.write_text('item { name: "none" label: 0 display_name: "background" }\n'
                    'item { name: "n02084071" label: 1 display_name: "dog" }\n'
                    'item { name: "cat" label: 2 }\n')
    assert crema.detection.read_labelmap(str(path)) == {0: "background", 1: "dog", 2: "cat"}
    voc = crema.detection.read_labelmap(str(SOURCE / "examples/detect/labelmap_voc.prototxt"))
    assert len(voc) == 21 and voc[15] == "person"
    path.write_text('item { name: "a" label: 1 }\nitem { name: "b" label: 1 }\n')
    with pytest.raises(ValueError, match="label 1 has two items"):
        crema.detection.read_labelmap(str(path))
    path.write_text('item { nme: "a" }\n')
    with pytest.raises(ValueError, match="labelmap.prototxt.*expected an SSD LabelMap"):
        crema.detection.read_labelmap(str(path))
    with pytest.raises(OSError):
        crema.detection.read_labelmap(str(tmp_path / "absent.prototxt"))


def test_example_detect_python(tmp_path):
    pytest.importorskip("cv2")
    script = SOURCE / "examples/detect/detect_python.py"
    run = subprocess.run([sys.executable, str(script), "--out-dir", str(tmp_path), "--keep", "5"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, GLOG_minloglevel="1"))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "weights: RANDOM" in run.stdout
    assert "5 detections scoring >= 0.15" in run.stdout
    assert (tmp_path / "detections.png").stat().st_size > 0
