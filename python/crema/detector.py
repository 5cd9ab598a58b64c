"""pycaffe's caffe.Detector: R-CNN-style detection, a classification net
run on windows of images (each window warped to the net's input, with
optional context padding). SSD-style nets, which find the boxes themselves,
are crema.detection.detect_ssd.
"""
import numpy as np

from . import io
from ._crema import TEST, Net
from .classifier import _make_transformer

# The selective-search module pycaffe's detect_selective_search imports.
SELECTIVE_SEARCH_MODULE = "selective_search_ijcv_with_python"


class Detector(Net):
    """Scores windows of images with a classification net.

    A window is (ymin, xmin, ymax, xmax) in pixels of the image. With
    context_pad p, a window is enlarged so that, once warped to the input's
    size S, it fills the centre S - 2p pixels and its surroundings the
    border; the part of that border outside the image is the mean (in the
    image's own scale: before raw scale and channel swap), or 0 without one.
    mean, input_scale, raw_scale and channel_swap are the Transformer's.
    """

    def __init__(self, model_file, pretrained_file, mean=None, input_scale=None,
                 raw_scale=None, channel_swap=None, context_pad=None):
        Net.__init__(self, model_file, pretrained_file, TEST)
        in_ = self.inputs[0]
        self.transformer = _make_transformer(self, in_, mean, input_scale, raw_scale,
                                             channel_swap)
        self.configure_crop(context_pad)

    def detect_windows(self, images_windows):
        """Scores each window of each image: images_windows is a list of
        (image file, windows). Returns one dict per window, in order:
        {'window', 'prediction' (the first output's values), 'filename'}."""
        crops = []
        for filename, windows in images_windows:
            image = io.load_image(filename).astype(np.float32)
            for window in windows:
                crops.append(self.crop(image, window))
        if not crops:
            return []
        in_ = self.inputs[0]
        batch = np.asarray([self.transformer.preprocess(in_, crop) for crop in crops])
        predictions = self.forward_all(**{in_: batch})[self.outputs[0]]
        detections = []
        for filename, windows in images_windows:
            for window in windows:
                detections.append({'window': window, 'prediction': predictions[len(detections)],
                                   'filename': filename})
        return detections

    def detect_selective_search(self, image_fnames):
        """detect_windows on the windows that R-CNN's selective search
        proposes for each image (its Python module, run through MATLAB)."""
        try:
            import importlib
            selective_search = importlib.import_module(SELECTIVE_SEARCH_MODULE)
        except ImportError as err:
            raise ImportError(
                "detect_selective_search needs the %r module (R-CNN's selective search, which "
                "runs MATLAB) on the Python path; it is not installed (%s). Give your own "
                "windows to detect_windows instead." % (SELECTIVE_SEARCH_MODULE, err)) from None
        image_fnames = list(image_fnames)
        windows_list = selective_search.get_windows(image_fnames, cmd='selective_search_rcnn')
        return self.detect_windows(zip(image_fnames, windows_list))

    def crop(self, im, window):
        """The (H, W, K) pixels of one window of image im, with context
        padding when configured (then of the input's size)."""
        window = np.asarray(window)
        if window.shape != (4,):
            raise ValueError("a window is (ymin, xmin, ymax, xmax), got %r" % (window,))
        if not self.context_pad:
            y0, x0, y1, x1 = (int(v) for v in window)
            return im[y0:y1, x0:x1]
        return self._crop_with_context(im, window)

    def _crop_with_context(self, im, window):
        size = self.blobs[self.inputs[0]].width  # square inputs, as R-CNN's
        scale = size / (1.0 * size - 2 * self.context_pad)
        # The window (inclusive pixel bounds) enlarged about its centre.
        half = (window[2:] - window[:2] + 1) / 2.0
        centre = window[:2] + half
        box = np.round(np.concatenate([centre - scale * half, centre + scale * half]))
        full = box[2:] - box[:2] + 1
        pixel_scale = size / full  # input pixels per image pixel
        pad = np.round(np.maximum(0, -box[:2]) * pixel_scale).astype(int)  # rows, cols off the image
        limits = np.array(im.shape[:2] * 2, dtype=float)
        box = np.clip(box, 0, limits)
        clipped = box[2:] - box[:2] + 1
        if (clipped <= 0).any():
            raise ValueError("window %s lies outside the %dx%d image" % (window, im.shape[0],
                                                                        im.shape[1]))
        extent = np.minimum(np.round(clipped * pixel_scale).astype(int), size - pad)
        y0, x0, y1, x1 = (int(v) for v in box)
        context = io.resize_image(im[y0:y1, x0:x1], tuple(extent))
        crop = np.ones(self.crop_dims, dtype=np.float32) * self.crop_mean
        crop[pad[0]:pad[0] + extent[0], pad[1]:pad[1] + extent[1]] = context
        return crop

    def configure_crop(self, context_pad):
        """Sets crop_dims (the input as (H, W, K)), context_pad, and
        crop_mean, the mean in the image's scale for padding."""
        in_ = self.inputs[0]
        inverse_transpose = np.argsort(self.transformer.transpose[in_])
        self.crop_dims = np.array(self.blobs[in_].data.shape[1:])[inverse_transpose]
        self.context_pad = context_pad
        mean = self.transformer.mean.get(in_)
        if mean is None:
            self.crop_mean = np.zeros(self.crop_dims, dtype=np.float32)
            return
        crop_mean = mean.copy().transpose(inverse_transpose)
        channel_swap = self.transformer.channel_swap.get(in_)
        if channel_swap is not None:
            crop_mean = crop_mean[:, :, np.argsort(channel_swap)]
        raw_scale = self.transformer.raw_scale.get(in_)
        if raw_scale is not None:
            crop_mean = crop_mean / raw_scale
        self.crop_mean = crop_mean
