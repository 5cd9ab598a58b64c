"""Object detection with SSD-style nets (Wei Liu's SSD fork of Caffe).

  import crema
  net = crema.Net("deploy.prototxt", "weights.caffemodel", crema.TEST)
  image = crema.io.load_image("street.jpg")               # (H, W, 3) RGB in [0, 1]
  boxes, scores, labels = crema.detection.detect_ssd(net, image, threshold=0.5,
                                                     mean=(104, 117, 123))
  names = crema.detection.read_labelmap("labelmap_voc.prototxt")

The net's last output is a DetectionOutput top: shape (1, 1, N, 7), rows
(image, label, score, xmin, ymin, xmax, ymax) in [0, 1] image coordinates, a
label of -1 meaning nothing was kept. ``crema detect`` on the command line
prepares images and reads that output the same way.

These are not pycaffe's ``caffe.Detector``, which classifies given windows of
an image (R-CNN's selective-search crops) with a classification net; that
class, under its own name and signature, is a separate matter. SSD's nets find
the boxes themselves in one forward pass, so here a function takes a net and an
image and returns arrays.
"""
import collections
import os

import numpy as np

__all__ = ["Detections", "detect_ssd", "read_labelmap"]

# What detect_ssd returns: boxes (K, 4) float32 (xmin, ymin, xmax, ymax) in the
# pixels of the image given, scores (K,) float32, labels (K,) int64, in the
# DetectionOutput's order (by label, then descending score).
Detections = collections.namedtuple("Detections", ["boxes", "scores", "labels"])


def _net_input(net, input_name):
    name = input_name if input_name is not None else (net.inputs[0] if net.inputs else None)
    if name is None or name not in net.blobs:
        raise ValueError("the net has no input blob %r; name it with input_name=" % (name,))
    blob = net.blobs[name]
    if len(blob.shape) != 4 or blob.shape[1] not in (1, 3):
        raise ValueError("the net input %r of shape %s is not N x 1 or 3 channels x height x "
                         "width" % (name, tuple(blob.shape)))
    if blob.shape[0] != 1:
        blob.reshape(1, *blob.shape[1:])
        net.reshape()
    return blob


def _image_array(image):
    """The image as float32 (H, W, C) in [0, 1], read from a path if given one."""
    if isinstance(image, (str, bytes, os.PathLike)):
        from . import io
        return io.load_image(image)
    image = np.asarray(image)
    if image.dtype == np.uint8:
        raise ValueError("detect_ssd takes an image as crema.io.load_image returns it (float, RGB, "
                         "in [0, 1]); for an OpenCV BGR uint8 array pass image[:, :, ::-1] / 255.")
    if image.ndim == 2:
        image = image[:, :, np.newaxis]
    if image.ndim != 3 or image.size == 0:
        raise ValueError("detect_ssd needs an (H, W, C) image, got shape %s" % (image.shape,))
    return image.astype(np.float32, copy=False)


def _mean_per_channel(mean, channels):
    values = np.zeros(channels, np.float32) if mean is None else \
        np.asarray(mean, np.float32).ravel()
    if values.size == 1:
        values = np.repeat(values, channels)
    if values.size != channels or not np.all(np.isfinite(values)):
        raise ValueError("mean must be one number or %d (the input's channels, BGR order), got %r"
                         % (channels, mean))
    return values


def _preprocess(image, blob, mean, scale):
    """As SSD's deploy scripts: resize to the input's size, back to 0..255,
    RGB to BGR, channels first, the mean subtracted, then scaled."""
    from . import io
    channels, height, width = blob.shape[1:]
    if image.shape[2] != channels:
        raise ValueError("the image has %d channels, the net input %d" % (image.shape[2], channels))
    resized = io.resize_image(image, (height, width)) * 255.0
    if channels == 3:
        resized = resized[:, :, ::-1]
    planes = resized.transpose(2, 0, 1) - _mean_per_channel(mean, channels)[:, None, None]
    return planes * np.float32(scale)


def _detection_rows(net, output_name):
    name = output_name if output_name is not None else net.outputs[-1]
    rows = net.blobs[name].data
    if rows.ndim != 4 or rows.shape[0] != 1 or rows.shape[1] != 1 or rows.shape[3] != 7:
        raise ValueError("the net's output %r has shape %s, not (1, 1, N, 7) (a DetectionOutput "
                         "layer's top)" % (name, rows.shape))
    return rows[0, 0]


def detect_ssd(net, image, threshold=0.5, mean=None, scale=1.0, input_name=None,
               output_name=None):
    """Runs one image through an SSD-style deploy net; returns ``Detections``.

    ``image`` is an ``(H, W, C)`` array as ``crema.io.load_image`` returns it
    (float, RGB, in [0, 1]), or a file name to read so. It is resized to the
    net input's height x width (plain bilinear resize), turned into 0..255 BGR
    values, ``mean`` (one number or one per channel, BGR order, as Caffe's
    ``mean_value``: SSD's VGG nets 104, 117, 123; MobileNet-SSD 127.5) is
    subtracted and the result multiplied by ``scale`` (MobileNet-SSD:
    0.007843). The net input is reshaped to one image.

    The detections kept are those of a label (not -1) scoring at least
    ``threshold``; their boxes are scaled to the image's pixels and clipped to
    it. ``input_name`` and ``output_name`` default to the net's first input
    and last output. Raises ``ValueError`` for a threshold outside [0, 1], an
    image or mean that does not fit the input, or an output not of shape
    (1, 1, N, 7).
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must be in [0, 1], got %r" % (threshold,))
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError("scale must be a positive number, got %r" % (scale,))
    pixels = _image_array(image)
    blob = _net_input(net, input_name)
    blob.data[0] = _preprocess(pixels, blob, mean, scale)
    net.forward()
    rows = _detection_rows(net, output_name)
    kept = rows[(rows[:, 1] >= 0) & (rows[:, 2] >= threshold)]
    height, width = pixels.shape[:2]
    size = np.array([width, height, width, height], np.float32)
    boxes = np.clip(kept[:, 3:7], 0.0, 1.0) * size
    return Detections(boxes.astype(np.float32), kept[:, 2].astype(np.float32),
                      kept[:, 1].astype(np.int64))


def read_labelmap(path):
    """Label -> name from an SSD label map (a ``LabelMap`` prototxt of
    ``item { name label display_name }``): an item's ``display_name``, else
    its ``name``. Raises ``ValueError`` naming the file when it does not
    parse or gives a label twice, ``OSError`` when it cannot be read."""
    from google.protobuf import text_format

    from .proto import crema_pb2
    with open(path) as f:
        text = f.read()
    labelmap = crema_pb2.LabelMap()
    try:
        text_format.Parse(text, labelmap)
    except text_format.ParseError as e:
        raise ValueError("%s: %s (expected an SSD LabelMap)" % (path, e))
    names = {}
    for item in labelmap.item:
        if item.label in names:
            raise ValueError("%s: label %d has two items" % (path, item.label))
        names[item.label] = item.display_name or item.name
    return names
