"""crema.Classifier and crema.Detector (pycaffe's caffe.Classifier and
caffe.Detector) against the same steps done by hand: resizing, the centre
crop or the ten crops averaged, the Transformer's settings, the windows and
R-CNN's context padding."""
import numpy as np
import pytest

import crema

DEPLOY = """name: "tiny"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 dim: %d dim: %d } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: "gaussian" std: 0.005 }
                      bias_filler { type: "gaussian" std: 0.1 } } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
  inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.005 } } }
layer { name: "prob" type: "Softmax" bottom: "ip" top: "prob" }
"""

MEAN = np.array([30.0, 60.0, 90.0])  # per channel, in the net's (swapped) order
RAW_SCALE = 255.0
SWAP = (2, 1, 0)


@pytest.fixture
def tiny(tmp_path):
    """A random 3-channel classifier of an (height, width) input: its deploy
    prototxt and weights."""
    def make(height=8, width=8):
        model = tmp_path / ("tiny_%dx%d.prototxt" % (height, width))
        model.write_text(DEPLOY % (height, width))
        crema.set_random_seed(5)
        weights = tmp_path / ("tiny_%dx%d.caffemodel" % (height, width))
        crema.Net(str(model), crema.TEST).save(str(weights))
        return str(model), str(weights)
    return make


def by_hand(model, weights, crops):
    """The net's probabilities for each (H, W, 3) crop in [0, 1], prepared as
    the Transformer is set: channels first, swapped, x 255, minus the mean."""
    net = crema.Net(model, weights, crema.TEST)
    out = []
    for crop in crops:
        chw = crop.transpose(2, 0, 1)[list(SWAP)] * RAW_SCALE - MEAN[:, None, None]
        out.append(net.forward(data=chw[None].astype(np.float32))["prob"][0].copy())
    return np.array(out)


def ten_crops(image, h, w):
    """Corners (top-left, top-right, bottom-left, bottom-right), centre, then
    the five mirrored."""
    height, width = image.shape[:2]
    starts = [(0, 0), (0, width - w), (height - h, 0), (height - h, width - w),
              ((height - h) // 2, (width - w) // 2)]
    crops = [image[y:y + h, x:x + w] for y, x in starts]
    return crops + [c[:, ::-1] for c in crops]


def images():
    rng = np.random.RandomState(3)
    return [rng.rand(15, 13, 3).astype(np.float32), rng.rand(12, 12, 3).astype(np.float32)]


def test_classifier_oversample_is_the_mean_of_the_ten_crops(tiny):
    model, weights = tiny()
    classifier = crema.Classifier(model, weights, image_dims=(12, 12), mean=MEAN,
                                  raw_scale=RAW_SCALE, channel_swap=SWAP)
    assert isinstance(classifier, crema.Net)
    predicted = classifier.predict(images(), oversample=True)
    assert predicted.shape == (2, 5)
    for row, image in zip(predicted, images()):
        resized = crema.io.resize_image(image, (12, 12))
        expected = by_hand(model, weights, ten_crops(resized, 8, 8)).mean(axis=0)
        np.testing.assert_allclose(row, expected, rtol=1e-5, atol=1e-6)


def test_classifier_without_oversample_takes_the_centre_crop(tiny):
    model, weights = tiny()
    classifier = crema.Classifier(model, weights, image_dims=(12, 12), mean=MEAN,
                                  raw_scale=RAW_SCALE, channel_swap=SWAP)
    predicted = classifier.predict(images(), oversample=False)
    for row, image in zip(predicted, images()):
        centre = crema.io.resize_image(image, (12, 12))[2:10, 2:10]
        np.testing.assert_allclose(row, by_hand(model, weights, [centre])[0],
                                   rtol=1e-5, atol=1e-6)
    # A different crop gives a different answer: the test can tell crops apart.
    corner = crema.io.resize_image(images()[0], (12, 12))[0:8, 0:8]
    assert not np.allclose(predicted[0], by_hand(model, weights, [corner])[0], atol=1e-4)


def test_classifier_defaults_to_the_input_size(tiny):
    model, weights = tiny(8, 10)
    classifier = crema.Classifier(model, weights, mean=MEAN, raw_scale=RAW_SCALE,
                                  channel_swap=SWAP)
    assert list(classifier.image_dims) == [8, 10] and list(classifier.crop_dims) == [8, 10]
    image = np.random.RandomState(4).rand(8, 10, 3).astype(np.float32)
    np.testing.assert_allclose(classifier.predict([image], oversample=False)[0],
                               by_hand(model, weights, [image])[0], rtol=1e-5, atol=1e-6)
    # input_scale multiplies last.
    scaled = crema.Classifier(model, weights, mean=MEAN, raw_scale=RAW_SCALE,
                              channel_swap=SWAP, input_scale=0.5)
    net = crema.Net(model, weights, crema.TEST)
    chw = (image.transpose(2, 0, 1)[list(SWAP)] * RAW_SCALE - MEAN[:, None, None]) * 0.5
    np.testing.assert_allclose(scaled.predict([image], oversample=False)[0],
                               net.forward(data=chw[None].astype(np.float32))["prob"][0],
                               rtol=1e-5, atol=1e-6)


def test_classifier_refusals(tiny):
    model, weights = tiny()
    with pytest.raises(ValueError, match="image_dims"):
        crema.Classifier(model, weights, image_dims=(6, 6))
    classifier = crema.Classifier(model, weights)
    with pytest.raises(ValueError, match="at least one image"):
        classifier.predict([])
    with pytest.raises(crema.Error, match="nowhere"):
        crema.Classifier(model, "nowhere.caffemodel")


def write_png(path, rgb):
    import cv2
    assert cv2.imwrite(str(path), (rgb[:, :, ::-1] * 255).round().astype(np.uint8))
    return str(path)


def test_detector_scores_each_window(tiny, tmp_path):
    pytest.importorskip("cv2")
    model, weights = tiny()
    rng = np.random.RandomState(6)
    first = write_png(tmp_path / "a.png", rng.rand(40, 50, 3))
    second = write_png(tmp_path / "b.png", rng.rand(30, 30, 3))
    windows = [(first, [np.array([0, 0, 20, 25]), np.array([10, 12, 40, 50])]),
               (second, [np.array([5, 5, 13, 13])])]
    detector = crema.Detector(model, weights, mean=MEAN, raw_scale=RAW_SCALE, channel_swap=SWAP)
    detections = detector.detect_windows(windows)
    assert [(d["filename"], tuple(d["window"])) for d in detections] == [
        (first, (0, 0, 20, 25)), (first, (10, 12, 40, 50)), (second, (5, 5, 13, 13))]
    for detection in detections:
        image = crema.io.load_image(detection["filename"])
        y0, x0, y1, x1 = detection["window"]
        warped = crema.io.resize_image(image[y0:y1, x0:x1], (8, 8))
        np.testing.assert_allclose(detection["prediction"], by_hand(model, weights, [warped])[0],
                                   rtol=1e-5, atol=1e-6)


def test_detector_context_padding(tiny):
    # A 40 x 40 window of ones in a zero image; input 32, context_pad 4: the
    # window fills the centre 24 x 24 of the crop, its surroundings the rest.
    model, weights = tiny(32, 32)
    image = np.zeros((100, 100, 3), dtype=np.float32)
    image[20:60, 30:70] = 1
    plain = crema.Detector(model, weights, context_pad=4)
    crop = plain.crop(image, np.array([20, 30, 59, 69]))
    assert crop.shape == (32, 32, 3)
    assert np.all(crop[6:26, 6:26] == 1)
    assert np.all(crop[:3] == 0) and np.all(crop[29:] == 0)
    assert np.all(crop[:, :3] == 0) and np.all(crop[:, 29:] == 0)
    # A window at the corner: the context above and left is off the image and
    # is filled with the mean in the image's scale and channel order.
    detector = crema.Detector(model, weights, mean=MEAN, raw_scale=RAW_SCALE,
                              channel_swap=SWAP, context_pad=4)
    image = np.full((100, 100, 3), 0.5, dtype=np.float32)
    crop = detector.crop(image, np.array([0, 0, 39, 39]))
    image_order_mean = MEAN[list(np.argsort(SWAP))] / RAW_SCALE
    np.testing.assert_allclose(crop[:4, :4], np.broadcast_to(image_order_mean, (4, 4, 3)))
    np.testing.assert_allclose(crop[10:, 10:], 0.5)
    # No context: the window's pixels as they are.
    np.testing.assert_array_equal(crema.Detector(model, weights).crop(image, [3, 4, 9, 12]),
                                  image[3:9, 4:12])


def test_detector_without_selective_search_says_so(tiny):
    model, weights = tiny()
    with pytest.raises(ImportError, match="selective_search_ijcv_with_python"):
        crema.Detector(model, weights).detect_selective_search(["x.jpg"])
