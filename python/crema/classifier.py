"""pycaffe's caffe.Classifier: a deploy net that classifies images given as
(H, W, K) arrays (what caffe.io.load_image returns), resizing them, taking
the centre crop or ten crops, and preparing them through caffe.io.Transformer.
"""
import numpy as np

from . import io
from ._crema import TEST, Net


class Classifier(Net):
    """Classifies images with a deploy net and its weights.

    The images are resized to image_dims (default: the net input's height
    and width), then cropped to the input's size: the centre crop, or with
    oversample the four corners, the centre and their mirrors, whose
    predictions are averaged. mean, input_scale, raw_scale and channel_swap
    set the Transformer of the first input (see caffe.io.Transformer), which
    also moves channels first.
    """

    def __init__(self, model_file, pretrained_file, image_dims=None, mean=None,
                 input_scale=None, raw_scale=None, channel_swap=None):
        Net.__init__(self, model_file, pretrained_file, TEST)
        in_ = self.inputs[0]
        self.transformer = _make_transformer(self, in_, mean, input_scale, raw_scale,
                                             channel_swap)
        self.crop_dims = np.array(self.blobs[in_].data.shape[2:])
        if image_dims is None or len(image_dims) == 0:
            image_dims = self.crop_dims
        self.image_dims = np.array(image_dims)
        if self.image_dims.shape != (2,) or (self.image_dims < self.crop_dims).any():
            raise ValueError("image_dims %s must be (height, width), at least the input's %s"
                             % (tuple(self.image_dims), tuple(self.crop_dims)))

    def predict(self, inputs, oversample=True):
        """The first output's values, one row per image of `inputs` (a list
        of (H, W, K) arrays, any sizes): with oversample, the mean over the
        ten crops of each image; without, the centre crop's."""
        if len(inputs) == 0:
            raise ValueError("predict needs at least one image")
        channels = np.asarray(inputs[0]).shape[2]
        resized = np.zeros((len(inputs), self.image_dims[0], self.image_dims[1], channels),
                           dtype=np.float32)
        for ix, image in enumerate(inputs):
            resized[ix] = io.resize_image(image, self.image_dims)
        if oversample:
            crops = io.oversample(resized, self.crop_dims)
        else:
            top, left = (self.image_dims - self.crop_dims) // 2
            crops = resized[:, top:top + self.crop_dims[0], left:left + self.crop_dims[1], :]
        in_ = self.inputs[0]
        batch = np.asarray([self.transformer.preprocess(in_, crop) for crop in crops])
        predictions = self.forward_all(**{in_: batch})[self.outputs[0]]
        if oversample:
            predictions = predictions.reshape((len(predictions) // 10, 10, -1)).mean(axis=1)
        return predictions


def _make_transformer(net, in_, mean, input_scale, raw_scale, channel_swap):
    """A Transformer for input in_: channels first, then the settings given."""
    transformer = io.Transformer({in_: net.blobs[in_].data.shape})
    transformer.set_transpose(in_, (2, 0, 1))
    if mean is not None:
        transformer.set_mean(in_, mean)
    if input_scale is not None:
        transformer.set_input_scale(in_, input_scale)
    if raw_scale is not None:
        transformer.set_raw_scale(in_, raw_scale)
    if channel_swap is not None:
        transformer.set_channel_swap(in_, channel_swap)
    return transformer
