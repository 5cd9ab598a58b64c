"""Conversions between numpy arrays, Crema protobuf messages and images.

This module mirrors pycaffe's ``caffe.io``: code written as
``caffe.io.blobproto_to_array(...)``, ``caffe.io.Transformer(...)``,
``caffe.io.load_image(...)`` and so on runs unchanged with
``import crema as caffe``.

Conventions, as in pycaffe:

* Images (what :func:`load_image` returns and what
  :meth:`Transformer.preprocess` takes) are float32 arrays of shape
  ``(H, W, C)``, channels in RGB order, values in ``[0, 1]``.
* Net inputs are arrays of shape ``(C, H, W)`` (one image) or
  ``(N, C, H, W)`` (a batch).

Image decoding and bilinear resizing go through the C++ extension
``crema._crema`` (OpenCV, as the ImageData layer decodes); it is imported
only by the functions that need it, so everything else in this module works
without the extension.
"""

import os

import numpy as np

from .proto import crema_pb2

# pycaffe's io module exposes the generated protobuf module under this name;
# some user code reaches it as ``caffe.io.caffe_pb2``.
caffe_pb2 = crema_pb2

__all__ = [
    "blobproto_to_array",
    "array_to_blobproto",
    "arraylist_to_blobprotovector_str",
    "blobprotovector_str_to_arraylist",
    "array_to_datum",
    "datum_to_array",
    "Transformer",
    "load_image",
    "resize_image",
    "oversample",
]


# ---------------------------------------------------------------------------
# BlobProto
# ---------------------------------------------------------------------------

def _has_legacy_shape(blob):
    return (blob.HasField("num") or blob.HasField("channels")
            or blob.HasField("height") or blob.HasField("width"))


def blobproto_to_array(blob, return_diff=False):
    """Return the values of a ``BlobProto`` as a numpy array.

    The shape comes from the legacy 4-D fields ``num, channels, height,
    width`` when any of them is set (as Caffe's and Crema's
    ``Blob::FromProto`` read it; unset ones count as 0), otherwise from
    ``shape.dim`` (an empty ``shape`` is a scalar).

    The values are ``data`` (``diff`` when ``return_diff`` is true); when
    that field is empty the double-precision ``double_data``
    (``double_diff``) is used instead. The result is float64, as pycaffe
    returns.

    Raises ``ValueError`` when the number of values does not match the
    shape.
    """
    if return_diff:
        values, double_values, what = blob.diff, blob.double_diff, "diff"
    else:
        values, double_values, what = blob.data, blob.double_data, "data"
    if len(values) == 0 and len(double_values) > 0:
        values, what = double_values, "double_" + what
    arr = np.array(values, dtype=np.float64)

    if _has_legacy_shape(blob):
        shape = (blob.num, blob.channels, blob.height, blob.width)
    else:
        shape = tuple(int(d) for d in blob.shape.dim)
    expected = int(np.prod(shape, dtype=np.int64))
    if any(d < 0 for d in shape) or arr.size != expected:
        raise ValueError(
            "BlobProto holds %d %s values but its shape %s needs %d"
            % (arr.size, what, shape, expected))
    return arr.reshape(shape)


def array_to_blobproto(arr, diff=None):
    """Return a ``BlobProto`` holding ``arr`` (and ``diff``, when given).

    ``shape.dim`` is set to ``arr.shape`` (any number of axes) and the
    values are stored, in C order, as single-precision ``data`` (and
    ``diff``).

    Raises ``ValueError`` when ``diff`` does not have as many values as
    ``arr``.
    """
    arr = np.asarray(arr)
    blob = crema_pb2.BlobProto()
    blob.shape.dim.extend(int(d) for d in arr.shape)
    blob.data.extend(arr.astype(np.float64).ravel().tolist())
    if diff is not None:
        diff = np.asarray(diff)
        if diff.size != arr.size:
            raise ValueError(
                "diff has %d values (shape %s) but the array has %d (shape %s)"
                % (diff.size, diff.shape, arr.size, arr.shape))
        blob.diff.extend(diff.astype(np.float64).ravel().tolist())
    return blob


def arraylist_to_blobprotovector_str(arraylist):
    """Serialize a list of arrays as a ``BlobProtoVector`` (bytes).

    Each array becomes one ``BlobProto`` as made by
    :func:`array_to_blobproto`.
    """
    vec = crema_pb2.BlobProtoVector()
    vec.blobs.extend([array_to_blobproto(arr) for arr in arraylist])
    return vec.SerializeToString()


def blobprotovector_str_to_arraylist(str):  # noqa: A002 (pycaffe's name)
    """Parse a serialized ``BlobProtoVector`` into a list of arrays.

    Each blob is converted by :func:`blobproto_to_array`. Raises
    ``google.protobuf.message.DecodeError`` when the bytes do not parse.
    """
    vec = crema_pb2.BlobProtoVector()
    vec.ParseFromString(str)
    return [blobproto_to_array(blob) for blob in vec.blobs]


# ---------------------------------------------------------------------------
# Datum
# ---------------------------------------------------------------------------

def array_to_datum(arr, label=None):
    """Return a ``Datum`` holding a 3-D array of shape ``(C, H, W)``.

    ``channels, height, width`` are set from the shape. A uint8 array is
    stored as raw bytes in ``data``; any other dtype is stored as
    ``float_data``. ``label`` is set when given.

    Raises ``ValueError`` when ``arr`` is not 3-D.
    """
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise ValueError(
            "array_to_datum needs a 3-D (channels, height, width) array, "
            "got %d-D with shape %s" % (arr.ndim, arr.shape))
    datum = crema_pb2.Datum()
    datum.channels, datum.height, datum.width = (int(d) for d in arr.shape)
    if arr.dtype == np.uint8:
        datum.data = np.ascontiguousarray(arr).tobytes()
    else:
        datum.float_data.extend(arr.astype(np.float64).ravel().tolist())
    if label is not None:
        datum.label = int(label)
    return datum


def datum_to_array(datum):
    """Return the values of a ``Datum`` as a ``(C, H, W)`` array.

    Raw ``data`` bytes give a uint8 array; otherwise ``float_data`` gives a
    float64 array (as pycaffe returns). The label is not part of the result:
    read ``datum.label``.

    Raises ``ValueError`` for an encoded datum (compressed image bytes:
    decode it first) and when the number of values does not match
    ``channels * height * width``.
    """
    if datum.encoded:
        raise ValueError(
            "datum is encoded (compressed image bytes, %d bytes); decode it "
            "first" % len(datum.data))
    shape = (datum.channels, datum.height, datum.width)
    expected = datum.channels * datum.height * datum.width
    if len(datum.data):
        if len(datum.data) != expected:
            raise ValueError(
                "datum holds %d data bytes but its shape %s needs %d"
                % (len(datum.data), shape, expected))
        return np.frombuffer(datum.data, dtype=np.uint8).reshape(shape).copy()
    if len(datum.float_data) != expected:
        raise ValueError(
            "datum holds %d float_data values but its shape %s needs %d"
            % (len(datum.float_data), shape, expected))
    return np.array(datum.float_data, dtype=np.float64).reshape(shape)


# ---------------------------------------------------------------------------
# Transformer
# ---------------------------------------------------------------------------

def _subtract_mean_and_scale(in_, caffe_in, mean, input_scale):
    """(caffe_in - mean) * input_scale by the C++ DataTransformer, the one
    that data layers, ``crema classify`` and ``crema detect`` use.

    ``mean`` is as :meth:`Transformer.set_mean` leaves it, ``(C, 1, 1)`` or
    ``(C, H, W)``, in the net's layout: ``caffe_in`` must then be ``(C, H,
    W)`` with the same channels (and height and width, for a per-pixel
    mean). Raises ``ValueError`` naming the input otherwise.
    """
    from . import _crema

    if mean is not None:
        per_channel = mean.shape[1:] == (1, 1)
        needed = mean.shape[:1] if per_channel else mean.shape
        got = caffe_in.shape[:1] if per_channel else caffe_in.shape
        if tuple(got) != tuple(needed):
            raise ValueError(
                "preprocess(%r): the mean is in the net's layout, %s, but the "
                "image is %s at that step (set_transpose, e.g. (2, 0, 1), "
                "turns (H, W, C) into (C, H, W))"
                % (in_, mean.shape if not per_channel else "(%d, H, W)" % mean.shape[0],
                   caffe_in.shape))
        mean = mean.reshape(-1) if per_channel else mean
    scale = 1.0 if input_scale is None else float(input_scale)
    return np.asarray(_crema._subtract_mean_and_scale(caffe_in, mean, scale))


class Transformer(object):
    """Turn images into net inputs and back, per input blob.

    ``inputs`` maps each input blob name to its shape ``(N, C, H, W)``,
    e.g. ``{'data': net.blobs['data'].data.shape}``. For each input, set
    any of: a transpose (usually ``(2, 0, 1)``: ``H, W, C`` to ``C, H, W``),
    a channel swap (e.g. ``(2, 1, 0)``: RGB to BGR), a raw scale (e.g. 255),
    a mean to subtract and an input scale.

    :meth:`preprocess` applies them in this order: convert to float32,
    resize to the input's ``H, W`` (when the image's first two axes differ),
    transpose, channel swap, raw scale, subtract mean, input scale.
    :meth:`deprocess` undoes them in reverse order (not the resize).

    Every method raises ``ValueError`` naming the input when it is not one
    of ``inputs``.
    """

    def __init__(self, inputs):
        self.inputs = {name: tuple(int(d) for d in shape)
                       for name, shape in dict(inputs).items()}
        self.transpose = {}
        self.channel_swap = {}
        self.raw_scale = {}
        self.mean = {}
        self.input_scale = {}

    def _check_input(self, in_):
        if in_ not in self.inputs:
            raise ValueError(
                "%r is not one of the net inputs: %s"
                % (in_, ", ".join(repr(k) for k in sorted(self.inputs, key=repr))))

    def preprocess(self, in_, data):
        """Turn an image into the net's layout for input ``in_``.

        ``data`` is an ``(H, W, K)`` image (any numeric dtype). The steps,
        in order: convert to float32 (a copy: ``data`` is never modified);
        resize to the input's ``(H, W)`` with :func:`resize_image` when
        ``data.shape[:2]`` differs; transpose; channel swap; multiply by the
        raw scale; subtract the mean; multiply by the input scale. Each step
        runs only when set. With the usual transpose ``(2, 0, 1)`` the
        result is ``(C, H, W)`` float32.

        The mean and the input scale are applied by the C++ DataTransformer
        (``crema._crema``), the one data layers, ``crema classify`` and
        ``crema detect`` use.

        Raises ``ValueError`` for an unknown input, when ``data`` is not
        3-D, or when a mean is set and the image is not yet in the net's
        ``(C, H, W)`` layout at that step (no transpose set).
        """
        self._check_input(in_)
        caffe_in = np.array(data, dtype=np.float32, copy=True)
        if caffe_in.ndim != 3:
            raise ValueError(
                "preprocess(%r) needs a 3-D (height, width, channels) image, "
                "got shape %s" % (in_, caffe_in.shape))
        transpose = self.transpose.get(in_)
        channel_swap = self.channel_swap.get(in_)
        raw_scale = self.raw_scale.get(in_)
        mean = self.mean.get(in_)
        input_scale = self.input_scale.get(in_)

        in_dims = self.inputs[in_][2:]
        if tuple(caffe_in.shape[:2]) != tuple(in_dims):
            caffe_in = resize_image(caffe_in, in_dims)
        if transpose is not None:
            caffe_in = caffe_in.transpose(transpose)
        if channel_swap is not None:
            caffe_in = caffe_in[list(channel_swap), :, :]
        if raw_scale is not None:
            caffe_in *= raw_scale
        if mean is None and input_scale is None:
            return caffe_in
        return _subtract_mean_and_scale(in_, caffe_in, mean, input_scale)

    def deprocess(self, in_, data):
        """Undo :meth:`preprocess` for input ``in_`` (except the resize).

        ``data`` is one net input, ``(C, H, W)``, or a batch of one,
        ``(1, C, H, W)``. The steps, in order: divide by the input scale;
        add the mean; divide by the raw scale; undo the channel swap; undo
        the transpose. The result is squeezed, as pycaffe's is (a
        one-channel image comes back ``(H, W)``); ``data`` is not modified.

        Raises ``ValueError`` for an unknown input, or when a transpose,
        channel swap or mean is set and ``data`` is not one 3-D input.
        """
        self._check_input(in_)
        decaf_in = np.array(data, copy=True)
        if not np.issubdtype(decaf_in.dtype, np.floating):
            decaf_in = decaf_in.astype(np.float32)
        while decaf_in.ndim > 3 and decaf_in.shape[0] == 1:
            decaf_in = decaf_in[0]
        transpose = self.transpose.get(in_)
        channel_swap = self.channel_swap.get(in_)
        raw_scale = self.raw_scale.get(in_)
        mean = self.mean.get(in_)
        input_scale = self.input_scale.get(in_)
        if decaf_in.ndim != 3 and (transpose is not None or channel_swap is not None
                                   or mean is not None):
            raise ValueError(
                "deprocess(%r) needs one (channels, height, width) input, "
                "got shape %s" % (in_, np.shape(data)))

        if input_scale is not None:
            decaf_in /= input_scale
        if mean is not None:
            decaf_in += mean
        if raw_scale is not None:
            decaf_in /= raw_scale
        if channel_swap is not None:
            decaf_in = decaf_in[list(np.argsort(channel_swap)), :, :]
        if transpose is not None:
            decaf_in = decaf_in.transpose(np.argsort(transpose))
        return decaf_in.squeeze()

    def set_transpose(self, in_, order):
        """Set the axis order applied to images of input ``in_``.

        ``order`` has one entry per image axis, e.g. ``(2, 0, 1)`` to turn
        ``(H, W, C)`` into ``(C, H, W)``. Raises ``ValueError`` when it does
        not have ``len(shape) - 1`` entries.
        """
        self._check_input(in_)
        order = tuple(int(i) for i in order)
        if len(order) != len(self.inputs[in_]) - 1:
            raise ValueError(
                "transpose order %s for %r needs %d entries, one per image "
                "axis" % (order, in_, len(self.inputs[in_]) - 1))
        self.transpose[in_] = order

    def set_channel_swap(self, in_, order):
        """Set the channel order for input ``in_`` (applied after transpose).

        E.g. ``(2, 1, 0)`` turns RGB into BGR. Raises ``ValueError`` when it
        does not have one entry per channel of the input.
        """
        self._check_input(in_)
        order = tuple(int(i) for i in order)
        if len(order) != self.inputs[in_][1]:
            raise ValueError(
                "channel swap %s for %r needs %d entries, one per input "
                "channel" % (order, in_, self.inputs[in_][1]))
        self.channel_swap[in_] = order

    def set_raw_scale(self, in_, scale):
        """Set the factor applied after the channel swap for input ``in_``.

        E.g. 255 when the model expects values in ``[0, 255]`` but images
        come from :func:`load_image` in ``[0, 1]``.
        """
        self._check_input(in_)
        self.raw_scale[in_] = scale

    def set_mean(self, in_, mean):
        """Set the mean subtracted (after raw scaling) for input ``in_``.

        ``mean`` is either per channel, 1-D of length ``C``, or per pixel,
        ``(C, H, W)`` equal to the input's shape without ``N`` (a 2-D
        ``(H, W)`` mean is taken as ``(1, H, W)``). It is in the net's
        layout, i.e. after transpose and channel swap.

        Raises ``ValueError``, naming the expected shape, for any other
        shape (a per-pixel mean of another height or width is not resized).
        """
        self._check_input(in_)
        mean = np.array(mean, copy=True)
        given = mean.shape
        chw = self.inputs[in_][1:]
        if mean.ndim == 1:
            if mean.shape[0] != chw[0]:
                raise ValueError(
                    "mean for %r has %d channels; the input has %d (expected "
                    "shape (%d,) or %s)" % (in_, mean.shape[0], chw[0], chw[0], chw))
            mean = mean[:, np.newaxis, np.newaxis]
        else:
            if mean.ndim == 2:
                mean = mean[np.newaxis, :, :]
            if mean.ndim != 3 or tuple(mean.shape) != tuple(chw):
                raise ValueError(
                    "mean shape %s is incompatible with input %r: expected "
                    "(%d,) or %s" % (given, in_, chw[0], chw))
        self.mean[in_] = mean

    def set_input_scale(self, in_, scale):
        """Set the factor applied last, after mean subtraction, for ``in_``.

        E.g. ``0.017`` to normalise the spread of mean-subtracted values.
        """
        self._check_input(in_)
        self.input_scale[in_] = scale


# ---------------------------------------------------------------------------
# Images
# ---------------------------------------------------------------------------

def load_image(filename, color=True):
    """Load an image file as a float32 array in ``[0, 1]``.

    Returns ``(H, W, 3)`` in RGB order when ``color`` (a grey file is
    expanded to three equal channels; an alpha channel is dropped), or
    ``(H, W, 1)`` grey otherwise. The file is decoded by OpenCV through
    ``crema._crema`` (8 bits per channel) and divided by 255.

    Raises ``IOError``/``OSError`` (or ``RuntimeError``) naming the file
    when it is missing or not a decodable image, and ``ImportError`` when
    the ``crema._crema`` extension is not built.
    """
    from . import _crema

    filename = os.fspath(filename)
    if isinstance(filename, bytes):
        filename = os.fsdecode(filename)
    img = np.asarray(_crema._read_image(filename, bool(color)))
    if img.ndim == 2:
        img = img[:, :, np.newaxis]
    if img.ndim != 3:
        raise RuntimeError("decoding %r gave an array of shape %s"
                           % (filename, img.shape))
    if color:
        if img.shape[2] == 1:
            img = np.tile(img, (1, 1, 3))
        elif img.shape[2] in (3, 4):
            img = img[:, :, 2::-1]  # BGR(A) -> RGB
        else:
            raise RuntimeError("decoding %r in colour gave %d channels"
                               % (filename, img.shape[2]))
    elif img.shape[2] != 1:
        raise RuntimeError("decoding %r in grey gave %d channels"
                           % (filename, img.shape[2]))
    if img.dtype == np.uint8:
        scaled = img.astype(np.float64) / 255.0
    elif img.dtype == np.uint16:
        scaled = img.astype(np.float64) / 65535.0
    else:
        scaled = img
    return np.ascontiguousarray(scaled, dtype=np.float32)


def _nearest_indices(n_in, n_out):
    # Pixel-centre aligned nearest neighbour: output pixel i samples input
    # pixel floor((i + 0.5) * n_in / n_out).
    idx = np.floor((np.arange(n_out) + 0.5) * (float(n_in) / n_out)).astype(np.intp)
    return np.clip(idx, 0, n_in - 1)


def resize_image(im, new_dims, interp_order=1):
    """Resize an ``(H, W, C)`` image to ``new_dims = (height, width)``.

    ``interp_order`` 1 is bilinear (OpenCV's ``INTER_LINEAR`` through
    ``crema._crema``), 0 is nearest neighbour (pixel centres aligned); any
    number of channels. A constant image gives a constant image of the new
    size without interpolating. Returns float32 ``(height, width, C)``.

    Raises ``ValueError`` when ``im`` is not 3-D or empty, ``new_dims`` is
    not two positive sizes, or ``interp_order`` is not 0 or 1;
    ``ImportError`` when bilinear resizing is needed and the extension is
    not built.
    """
    im = np.asarray(im)
    if im.ndim != 3:
        raise ValueError("resize_image needs a 3-D (height, width, channels) "
                         "image, got shape %s" % (im.shape,))
    if im.size == 0:
        raise ValueError("resize_image got an empty image of shape %s"
                         % (im.shape,))
    dims = tuple(int(d) for d in np.asarray(new_dims).ravel())
    if len(dims) != 2 or dims[0] <= 0 or dims[1] <= 0:
        raise ValueError("new_dims must be two positive sizes (height, width), "
                         "got %r" % (new_dims,))
    if interp_order not in (0, 1):
        raise ValueError("interp_order must be 0 (nearest) or 1 (bilinear), "
                         "got %r" % (interp_order,))
    height, width = dims
    channels = im.shape[2]

    im_min, im_max = im.min(), im.max()
    if not im_max > im_min:  # constant image (or NaN): nothing to interpolate
        ret = np.empty((height, width, channels), dtype=np.float32)
        ret.fill(im_min)
        return ret
    if im.shape[:2] == dims:
        return im.astype(np.float32)

    if interp_order == 0:
        rows = _nearest_indices(im.shape[0], height)
        cols = _nearest_indices(im.shape[1], width)
        return im[rows[:, np.newaxis], cols[np.newaxis, :], :].astype(np.float32)

    from . import _crema

    src = np.ascontiguousarray(im, dtype=np.float32)
    out = np.asarray(_crema._resize_image(src, height, width), dtype=np.float32)
    return out.reshape(height, width, channels)


def oversample(images, crop_dims):
    """Take ten crops of each image: the 4 corners, the centre and mirrors.

    ``images`` is a sequence (or ``(N, H, W, C)`` array) of ``(H, W, C)``
    images of the same channel count; ``crop_dims`` is ``(height,
    width)``. For each image the result holds, in order, the crops at the
    top-left, top-right, bottom-left and bottom-right corners and the
    centre, then those five flipped left-right. Returns float32
    ``(10 * N, height, width, C)``.

    Raises ``ValueError`` when an image is not 3-D or smaller than the crop.
    """
    crop_h, crop_w = (int(d) for d in np.asarray(crop_dims).ravel()[:2])
    images = [np.asarray(im) for im in images]
    if not images:
        return np.empty((0, crop_h, crop_w, 0), dtype=np.float32)
    channels = images[0].shape[-1]
    crops = np.empty((10 * len(images), crop_h, crop_w, channels),
                     dtype=np.float32)
    ix = 0
    for im in images:
        if im.ndim != 3 or im.shape[2] != channels:
            raise ValueError("oversample needs (height, width, %d) images, got "
                             "shape %s" % (channels, im.shape))
        h, w = im.shape[:2]
        if crop_h > h or crop_w > w or crop_h <= 0 or crop_w <= 0:
            raise ValueError("crop (%d, %d) does not fit in an image of shape %s"
                             % (crop_h, crop_w, im.shape))
        tops = (0, 0, h - crop_h, h - crop_h, (h - crop_h) // 2)
        lefts = (0, w - crop_w, 0, w - crop_w, (w - crop_w) // 2)
        for top, left in zip(tops, lefts):
            crops[ix] = im[top:top + crop_h, left:left + crop_w, :]
            ix += 1
        crops[ix:ix + 5] = crops[ix - 5:ix, :, ::-1, :]
        ix += 5
    return crops
