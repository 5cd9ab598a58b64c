"""Tests for crema.io, the pycaffe-compatible caffe.io module.

Functions that decode or resize images through the C++ extension are tested
twice: with a fake ``crema._crema`` (io.py's own logic: BGR to RGB, scaling,
grey handling) and, where the extension is built, with the real one.
"""

import struct
import sys
import types
import zlib

import numpy as np
import pytest

import crema
import crema.io as cio
from crema.proto import crema_pb2


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def write_png(path, pixels):
    """Write an 8-bit PNG with pure Python + zlib.

    ``pixels`` is uint8, (H, W) grey, (H, W, 3) RGB or (H, W, 4) RGBA.
    """
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    if pixels.ndim == 2:
        color_type = 0
    elif pixels.shape[2] == 3:
        color_type = 2
    elif pixels.shape[2] == 4:
        color_type = 6
    else:
        raise ValueError(pixels.shape)
    height, width = pixels.shape[:2]

    def chunk(kind, payload):
        body = kind + payload
        return (struct.pack(">I", len(payload)) + body
                + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + pixels[r].tobytes() for r in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", ihdr))
        f.write(chunk(b"IDAT", zlib.compress(raw)))
        f.write(chunk(b"IEND", b""))


def opencv_bilinear(im, height, width):
    """Reference for cv::resize INTER_LINEAR on float images (H, W, C)."""
    def taps(n_in, n_out):
        scale = n_in / n_out
        lo = np.empty(n_out, dtype=np.intp)
        frac = np.empty(n_out)
        for i in range(n_out):
            f = (i + 0.5) * scale - 0.5
            s = int(np.floor(f))
            f -= s
            if s < 0:
                s, f = 0, 0.0
            if s >= n_in - 1:
                s, f = n_in - 1, 0.0
            lo[i], frac[i] = s, f
        hi = np.minimum(lo + 1, n_in - 1)
        return lo, hi, frac

    im = im.astype(np.float64)
    r0, r1, fr = taps(im.shape[0], height)
    c0, c1, fc = taps(im.shape[1], width)
    out = np.empty((height, width, im.shape[2]))
    for i in range(height):
        for j in range(width):
            top = im[r0[i], c0[j]] * (1 - fc[j]) + im[r0[i], c1[j]] * fc[j]
            bot = im[r1[i], c0[j]] * (1 - fc[j]) + im[r1[i], c1[j]] * fc[j]
            out[i, j] = top * (1 - fr[i]) + bot * fr[i]
    return out


class FakeExtension(object):
    """Stands in for crema._crema and records its calls."""

    def __init__(self, image=None, error=None):
        self.image = image
        self.error = error
        self.read_calls = []
        self.resize_calls = []

    def _read_image(self, filename, color):
        self.read_calls.append((filename, color))
        if self.error is not None:
            raise self.error
        return self.image.copy()

    def _resize_image(self, image, height, width):
        self.resize_calls.append((image.copy(), height, width))
        # Nearest neighbour is enough to check the plumbing.
        rows = np.arange(height) * image.shape[0] // height
        cols = np.arange(width) * image.shape[1] // width
        return image[rows][:, cols].astype(np.float32)


@pytest.fixture
def fake_ext(monkeypatch):
    """Install a FakeExtension as crema._crema; returns it."""
    fake = FakeExtension()
    module = types.ModuleType("crema._crema")
    module._read_image = fake._read_image
    module._resize_image = fake._resize_image
    monkeypatch.setitem(sys.modules, "crema._crema", module)
    monkeypatch.setattr(crema, "_crema", module, raising=False)
    return fake


@pytest.fixture
def real_ext():
    return pytest.importorskip("crema._crema")


# ---------------------------------------------------------------------------
# BlobProto
# ---------------------------------------------------------------------------

def test_blobproto_round_trip_with_diff():
    rng = np.random.RandomState(0)
    data = rng.randn(2, 3, 4, 5).astype(np.float32)
    diff = rng.randn(2, 3, 4, 5).astype(np.float32)
    blob = cio.array_to_blobproto(data, diff)
    assert list(blob.shape.dim) == [2, 3, 4, 5]
    assert not blob.HasField("num")
    assert len(blob.data) == 120 and len(blob.diff) == 120

    # Through the wire format too.
    parsed = crema_pb2.BlobProto()
    parsed.ParseFromString(blob.SerializeToString())
    got = cio.blobproto_to_array(parsed)
    got_diff = cio.blobproto_to_array(parsed, return_diff=True)
    assert got.shape == (2, 3, 4, 5) and got_diff.shape == (2, 3, 4, 5)
    np.testing.assert_array_equal(got, data)
    np.testing.assert_array_equal(got_diff, diff)
    assert got.dtype == np.float64  # as pycaffe returns


@pytest.mark.parametrize("shape", [(7,), (2, 3), (1, 2, 1, 3, 2)])
def test_blobproto_round_trip_any_axes(shape):
    arr = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) - 3.5
    got = cio.blobproto_to_array(cio.array_to_blobproto(arr))
    assert got.shape == shape
    np.testing.assert_array_equal(got, arr)


def test_blobproto_scalar_and_no_diff():
    blob = cio.array_to_blobproto(np.float32(2.5))
    assert list(blob.shape.dim) == [] and list(blob.data) == [2.5]
    assert len(blob.diff) == 0
    got = cio.blobproto_to_array(blob)
    assert got.shape == () and got == 2.5


def test_blobproto_stores_float_precision():
    blob = cio.array_to_blobproto(np.array([0.1, 1e-3]))
    got = cio.blobproto_to_array(blob)
    np.testing.assert_array_equal(got, np.array([0.1, 1e-3], dtype=np.float32))


def test_blobproto_legacy_4d_fields():
    blob = crema_pb2.BlobProto()
    blob.num, blob.channels, blob.height, blob.width = 2, 1, 2, 3
    blob.data.extend(range(12))
    blob.diff.extend(range(12, 24))
    got = cio.blobproto_to_array(blob)
    assert got.shape == (2, 1, 2, 3)
    np.testing.assert_array_equal(got.ravel(), np.arange(12))
    assert got[1, 0, 1, 2] == 11
    got_diff = cio.blobproto_to_array(blob, return_diff=True)
    np.testing.assert_array_equal(got_diff.ravel(), np.arange(12, 24))


def test_blobproto_legacy_fields_take_precedence():
    # As Blob::FromProto and pycaffe: any legacy field set means the legacy
    # 4-D shape is used.
    blob = crema_pb2.BlobProto()
    blob.shape.dim.extend([6])
    blob.num, blob.channels, blob.height, blob.width = 1, 1, 2, 3
    blob.data.extend(range(6))
    assert cio.blobproto_to_array(blob).shape == (1, 1, 2, 3)


def test_blobproto_double_data():
    blob = crema_pb2.BlobProto()
    blob.shape.dim.extend([2, 2])
    values = [0.1, 1.0 / 3, -2.0, 1e-300]
    blob.double_data.extend(values)
    blob.double_diff.extend([v * 2 for v in values])
    got = cio.blobproto_to_array(blob)
    assert got.shape == (2, 2) and got.dtype == np.float64
    # Double precision survives (0.1 is not a float32 value).
    np.testing.assert_array_equal(got.ravel(), values)
    got_diff = cio.blobproto_to_array(blob, return_diff=True)
    np.testing.assert_array_equal(got_diff.ravel(), [v * 2 for v in values])


def test_blobproto_float_data_wins_over_double_data():
    blob = crema_pb2.BlobProto()
    blob.shape.dim.extend([2])
    blob.data.extend([1.0, 2.0])
    blob.double_data.extend([5.0, 6.0])
    np.testing.assert_array_equal(cio.blobproto_to_array(blob), [1.0, 2.0])


def test_blobproto_count_mismatch_raises():
    blob = crema_pb2.BlobProto()
    blob.shape.dim.extend([2, 3])
    blob.data.extend(range(5))
    with pytest.raises(ValueError, match=r"5 data values.*\(2, 3\).*6"):
        cio.blobproto_to_array(blob)
    # No diff stored: asking for it is an error, not an empty array.
    blob.data.append(5)
    with pytest.raises(ValueError, match="diff"):
        cio.blobproto_to_array(blob, return_diff=True)


def test_array_to_blobproto_diff_size_mismatch_raises():
    with pytest.raises(ValueError, match="diff"):
        cio.array_to_blobproto(np.zeros((2, 3)), np.zeros(5))


def test_blobprotovector_round_trip():
    rng = np.random.RandomState(1)
    arrays = [rng.randn(1, 3, 2, 2).astype(np.float32),
              rng.randn(10).astype(np.float32),
              np.arange(6, dtype=np.float32).reshape(2, 3)]
    s = cio.arraylist_to_blobprotovector_str(arrays)
    assert isinstance(s, bytes)
    vec = crema_pb2.BlobProtoVector()
    vec.ParseFromString(s)
    assert len(vec.blobs) == 3
    back = cio.blobprotovector_str_to_arraylist(s)
    assert len(back) == 3
    for a, b in zip(arrays, back):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_blobprotovector_empty():
    s = cio.arraylist_to_blobprotovector_str([])
    assert cio.blobprotovector_str_to_arraylist(s) == []


def test_caffe_pb2_alias():
    assert cio.caffe_pb2 is crema_pb2


# ---------------------------------------------------------------------------
# Datum
# ---------------------------------------------------------------------------

def test_datum_uint8_round_trip():
    arr = np.arange(60, dtype=np.uint8).reshape(3, 4, 5)
    datum = cio.array_to_datum(arr, label=7)
    assert (datum.channels, datum.height, datum.width) == (3, 4, 5)
    assert datum.data == arr.tobytes()
    assert len(datum.float_data) == 0
    assert datum.label == 7
    parsed = crema_pb2.Datum()
    parsed.ParseFromString(datum.SerializeToString())
    got = cio.datum_to_array(parsed)
    assert got.dtype == np.uint8 and got.shape == (3, 4, 5)
    np.testing.assert_array_equal(got, arr)
    assert parsed.label == 7
    got[0, 0, 0] = 99  # the result is writable, not a view of the bytes
    assert got[0, 0, 0] == 99


def test_datum_uint8_non_contiguous_input_is_c_order():
    base = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    arr = base.transpose(2, 0, 1)  # (4, 2, 3) view
    datum = cio.array_to_datum(arr)
    assert (datum.channels, datum.height, datum.width) == (4, 2, 3)
    np.testing.assert_array_equal(cio.datum_to_array(datum), arr)


def test_datum_float_round_trip():
    rng = np.random.RandomState(2)
    arr = rng.randn(2, 3, 4).astype(np.float32)
    datum = cio.array_to_datum(arr, label=0)
    assert datum.data == b""
    assert len(datum.float_data) == 24
    assert datum.HasField("label") and datum.label == 0
    parsed = crema_pb2.Datum()
    parsed.ParseFromString(datum.SerializeToString())
    got = cio.datum_to_array(parsed)
    assert got.shape == (2, 3, 4)
    assert np.issubdtype(got.dtype, np.floating)
    np.testing.assert_array_equal(got, arr)


def test_datum_without_label():
    datum = cio.array_to_datum(np.zeros((1, 2, 2), dtype=np.float64))
    assert not datum.HasField("label")


@pytest.mark.parametrize("shape", [(4, 5), (1, 2, 3, 4), (6,)])
def test_array_to_datum_wrong_ndim(shape):
    with pytest.raises(ValueError, match=r"%d-D" % len(shape)):
        cio.array_to_datum(np.zeros(shape, dtype=np.uint8))


def test_datum_to_array_encoded_raises():
    datum = crema_pb2.Datum()
    datum.channels, datum.height, datum.width = 3, 2, 2
    datum.data = b"\x89PNG\r\n\x1a\n..."
    datum.encoded = True
    with pytest.raises(ValueError, match="decode it first"):
        cio.datum_to_array(datum)


def test_datum_to_array_size_mismatch_raises():
    datum = crema_pb2.Datum()
    datum.channels, datum.height, datum.width = 3, 2, 2
    datum.data = b"\x00" * 11
    with pytest.raises(ValueError, match="11"):
        cio.datum_to_array(datum)


# ---------------------------------------------------------------------------
# Transformer
# ---------------------------------------------------------------------------

def small_image():
    # (H=2, W=2, C=3), RGB, values in [0, 1]
    return (np.arange(12, dtype=np.float32).reshape(2, 2, 3) + 1) / 16.0


def test_preprocess_hand_computed_channel_mean():
    img = small_image()
    t = cio.Transformer({"data": (1, 3, 2, 2)})
    t.set_transpose("data", (2, 0, 1))
    t.set_channel_swap("data", (2, 1, 0))
    t.set_raw_scale("data", 255.0)
    t.set_mean("data", np.array([10.0, 20.0, 30.0]))
    t.set_input_scale("data", 0.5)
    out = t.preprocess("data", img)
    assert out.shape == (3, 2, 2) and out.dtype == np.float32

    swap = (2, 1, 0)
    mean = (10.0, 20.0, 30.0)
    expected = np.empty((3, 2, 2))
    for c in range(3):
        for h in range(2):
            for w in range(2):
                expected[c, h, w] = (img[h, w, swap[c]] * 255.0 - mean[c]) * 0.5
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-4)
    # Spot check: output channel 0 is input B (channel 2); pixel (0, 1).
    assert out[0, 0, 1] == pytest.approx((6.0 / 16 * 255 - 10) * 0.5)


def test_preprocess_hand_computed_pixel_mean():
    img = small_image()
    mean = np.arange(12, dtype=np.float64).reshape(3, 2, 2) * 10.0
    t = cio.Transformer({"data": (4, 3, 2, 2)})
    t.set_transpose("data", (2, 0, 1))
    t.set_raw_scale("data", 16.0)
    t.set_mean("data", mean)
    out = t.preprocess("data", img)
    expected = np.empty((3, 2, 2))
    for c in range(3):
        for h in range(2):
            for w in range(2):
                expected[c, h, w] = img[h, w, c] * 16.0 - mean[c, h, w]
    np.testing.assert_allclose(out, expected, atol=1e-5)
    # img * 16 is 1..12 exactly.
    np.testing.assert_allclose(out[:, 0, 0], [1 - 0, 2 - 40, 3 - 80], atol=1e-5)


def test_preprocess_step_order_raw_scale_before_mean_before_input_scale():
    t = cio.Transformer({"x": (1, 1, 1, 1)})
    t.set_raw_scale("x", 3.0)
    t.set_mean("x", np.array([1.0]))
    t.set_input_scale("x", 10.0)
    out = t.preprocess("x", np.full((1, 1, 1), 2.0))
    assert out.ravel()[0] == pytest.approx((2.0 * 3.0 - 1.0) * 10.0)


def test_preprocess_mean_needs_the_nets_layout():
    # The mean is in the net's (C, H, W) layout; without a transpose the
    # image is still (H, W, C) there: refused, naming the input, rather than
    # broadcast across the wrong axes.
    t = cio.Transformer({"data": (1, 3, 4, 4)})
    t.set_mean("data", np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"preprocess\('data'\).*set_transpose"):
        t.preprocess("data", np.zeros((4, 4, 2), dtype=np.float32))
    t.set_transpose("data", (2, 0, 1))
    out = t.preprocess("data", np.full((4, 4, 3), 5.0, dtype=np.float32))
    np.testing.assert_array_equal(out[:, 0, 0], [4.0, 3.0, 2.0])


def test_preprocess_without_settings_is_float32_copy():
    img = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    t = cio.Transformer({"data": (1, 3, 2, 2)})
    out = t.preprocess("data", img)
    assert out.dtype == np.float32 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out, img)


def test_preprocess_does_not_modify_input():
    img = small_image()
    before = img.copy()
    t = cio.Transformer({"data": (1, 3, 2, 2)})
    t.set_transpose("data", (2, 0, 1))
    t.set_raw_scale("data", 255.0)
    t.set_mean("data", np.array([1.0, 2.0, 3.0]))
    t.preprocess("data", img)
    np.testing.assert_array_equal(img, before)


def test_preprocess_rejects_non_3d():
    t = cio.Transformer({"data": (1, 1, 2, 2)})
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        t.preprocess("data", np.zeros((2, 2)))


@pytest.mark.parametrize("mean_kind", ["channel", "pixel"])
def test_deprocess_inverts_preprocess(mean_kind):
    rng = np.random.RandomState(3)
    img = rng.rand(4, 5, 3).astype(np.float32)
    t = cio.Transformer({"data": (2, 3, 4, 5)})
    t.set_transpose("data", (2, 0, 1))
    t.set_channel_swap("data", (2, 0, 1))  # not its own inverse
    t.set_raw_scale("data", 255)
    if mean_kind == "channel":
        t.set_mean("data", np.array([104.0, 117.0, 123.0]))
    else:
        t.set_mean("data", rng.rand(3, 4, 5) * 100)
    t.set_input_scale("data", 0.017)
    net_in = t.preprocess("data", img)
    assert net_in.shape == (3, 4, 5)
    before = net_in.copy()
    back = t.deprocess("data", net_in)
    np.testing.assert_array_equal(net_in, before)  # input not modified
    assert back.shape == img.shape
    np.testing.assert_allclose(back, img, atol=1e-5)
    # A batch of one, as net.blobs['data'].data[...] often is.
    back1 = t.deprocess("data", net_in[np.newaxis])
    np.testing.assert_allclose(back1, img, atol=1e-5)


def test_deprocess_grey_is_squeezed_like_pycaffe():
    t = cio.Transformer({"data": (1, 1, 3, 4)})
    t.set_raw_scale("data", 255)
    net_in = np.arange(12, dtype=np.float32).reshape(1, 3, 4) * 255
    out = t.deprocess("data", net_in)
    assert out.shape == (3, 4)
    np.testing.assert_allclose(out, np.arange(12).reshape(3, 4))


def test_unknown_input_raises_naming_it():
    t = cio.Transformer({"data": (1, 3, 2, 2), "label": (1, 1, 1, 1)})
    calls = [
        lambda: t.preprocess("img", small_image()),
        lambda: t.deprocess("img", np.zeros((3, 2, 2))),
        lambda: t.set_transpose("img", (2, 0, 1)),
        lambda: t.set_channel_swap("img", (2, 1, 0)),
        lambda: t.set_raw_scale("img", 255),
        lambda: t.set_mean("img", np.zeros(3)),
        lambda: t.set_input_scale("img", 1.0),
    ]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        msg = str(info.value)
        assert "'img'" in msg and "'data'" in msg and "'label'" in msg


@pytest.mark.parametrize("shape", [(4,), (2, 2, 2), (3, 5, 5), (3, 2), (1, 3, 2, 2), ()])
def test_wrong_mean_shape_raises(shape):
    t = cio.Transformer({"data": (1, 3, 2, 2)})
    with pytest.raises(ValueError) as info:
        t.set_mean("data", np.zeros(shape))
    assert "(3, 2, 2)" in str(info.value)  # the expected shape
    assert "data" not in t.mean


def test_grey_2d_mean_accepted_for_one_channel():
    t = cio.Transformer({"data": (1, 1, 2, 2)})
    t.set_transpose("data", (2, 0, 1))
    t.set_mean("data", np.array([[1.0, 2.0], [3.0, 4.0]]))
    out = t.preprocess("data", np.full((2, 2, 1), 10.0))
    assert out.shape == (1, 2, 2)
    np.testing.assert_allclose(out[0], [[9, 8], [7, 6]])


def test_set_mean_keeps_a_copy():
    t = cio.Transformer({"data": (1, 3, 1, 1)})
    mean = np.array([1.0, 2.0, 3.0])
    t.set_mean("data", mean)
    mean[:] = 0
    t.set_transpose("data", (2, 0, 1))
    out = t.preprocess("data", np.full((1, 1, 3), 5.0))
    np.testing.assert_allclose(out.ravel(), [4, 3, 2])


def test_wrong_transpose_and_channel_swap_lengths_raise():
    t = cio.Transformer({"data": (1, 3, 2, 2)})
    with pytest.raises(ValueError, match="3 entries"):
        t.set_transpose("data", (1, 0))
    with pytest.raises(ValueError, match="3 entries"):
        t.set_channel_swap("data", (1, 0))
    assert t.transpose == {} and t.channel_swap == {}


def test_transformer_accepts_list_shapes():
    t = cio.Transformer({"data": [1, 3, 2, 2]})
    assert t.inputs["data"] == (1, 3, 2, 2)
    out = t.preprocess("data", small_image())  # no resize needed
    np.testing.assert_array_equal(out, small_image())


def test_preprocess_resizes_to_input_dims(fake_ext):
    img = np.arange(2 * 3 * 3, dtype=np.float32).reshape(2, 3, 3)
    t = cio.Transformer({"data": (1, 3, 4, 6)})
    t.set_transpose("data", (2, 0, 1))
    out = t.preprocess("data", img)
    assert len(fake_ext.resize_calls) == 1
    passed, h, w = fake_ext.resize_calls[0]
    assert (h, w) == (4, 6)
    np.testing.assert_array_equal(passed, img)
    assert out.shape == (3, 4, 6)
    np.testing.assert_array_equal(out[:, 0, 0], img[0, 0])
    np.testing.assert_array_equal(out[:, 3, 5], img[1, 2])


# ---------------------------------------------------------------------------
# oversample
# ---------------------------------------------------------------------------

def test_oversample_crops_and_mirrors():
    rng = np.random.RandomState(4)
    images = [rng.rand(6, 8, 3).astype(np.float32) for _ in range(2)]
    crops = cio.oversample(images, (4, 5))
    assert crops.shape == (20, 4, 5, 3) and crops.dtype == np.float32
    for n, im in enumerate(images):
        c = crops[10 * n:10 * n + 10]
        np.testing.assert_array_equal(c[0], im[0:4, 0:5])  # top left
        np.testing.assert_array_equal(c[1], im[0:4, 3:8])  # top right
        np.testing.assert_array_equal(c[2], im[2:6, 0:5])  # bottom left
        np.testing.assert_array_equal(c[3], im[2:6, 3:8])  # bottom right
        np.testing.assert_array_equal(c[4], im[1:5, 1:6])  # centre
        for k in range(5):
            np.testing.assert_array_equal(c[5 + k], c[k][:, ::-1, :])


def test_oversample_centre_odd_even():
    im = np.arange(5 * 4, dtype=np.float32).reshape(5, 4, 1)
    crops = cio.oversample(np.stack([im]), (2, 3))  # an (N, H, W, C) array
    assert crops.shape == (10, 2, 3, 1)
    # As pycaffe: int(centre -/+ crop / 2) = rows 1:3, cols 0:3.
    np.testing.assert_array_equal(crops[4], im[1:3, 0:3])
    np.testing.assert_array_equal(crops[9], im[1:3, 0:3][:, ::-1])


def test_oversample_full_size_crop():
    im = np.arange(12, dtype=np.float64).reshape(2, 2, 3)
    crops = cio.oversample([im], (2, 2))
    for k in range(5):
        np.testing.assert_array_equal(crops[k], im)
        np.testing.assert_array_equal(crops[5 + k], im[:, ::-1])


def test_oversample_crop_too_large_raises():
    with pytest.raises(ValueError, match="does not fit"):
        cio.oversample([np.zeros((4, 4, 3))], (5, 3))


# ---------------------------------------------------------------------------
# load_image / resize_image with a fake extension
# ---------------------------------------------------------------------------

def test_load_image_color_bgr_to_rgb(fake_ext, tmp_path):
    bgr = np.array([[[0, 0, 255], [0, 255, 0]],
                    [[255, 0, 0], [10, 20, 30]]], dtype=np.uint8)
    fake_ext.image = bgr
    path = tmp_path / "im.png"
    img = cio.load_image(path)  # a pathlib.Path is accepted
    assert fake_ext.read_calls == [(str(path), True)]
    assert img.dtype == np.float32 and img.shape == (2, 2, 3)
    np.testing.assert_array_equal(img[0, 0], [1, 0, 0])  # red
    np.testing.assert_array_equal(img[0, 1], [0, 1, 0])  # green
    np.testing.assert_array_equal(img[1, 0], [0, 0, 1])  # blue
    np.testing.assert_allclose(img[1, 1], np.array([30, 20, 10]) / 255.0, rtol=1e-6)
    assert img.flags["C_CONTIGUOUS"]


def test_load_image_scaling_matches_pycaffe(fake_ext):
    fake_ext.image = np.arange(256, dtype=np.uint8).reshape(16, 16, 1)
    img = cio.load_image("x.png", color=False)
    expected = (np.arange(256) / 255.0).astype(np.float32).reshape(16, 16, 1)
    np.testing.assert_array_equal(img, expected)
    assert img.min() == 0.0 and img.max() == 1.0


def test_load_image_grey(fake_ext):
    fake_ext.image = np.array([[[0], [51]], [[102], [255]]], dtype=np.uint8)
    img = cio.load_image("g.png", color=False)
    assert fake_ext.read_calls == [("g.png", False)]
    assert img.shape == (2, 2, 1) and img.dtype == np.float32
    np.testing.assert_allclose(img[..., 0], [[0, 0.2], [0.4, 1]], rtol=1e-6)


def test_load_image_grey_2d_from_extension(fake_ext):
    fake_ext.image = np.array([[0, 255]], dtype=np.uint8)
    img = cio.load_image("g.png", color=False)
    assert img.shape == (1, 2, 1)
    np.testing.assert_array_equal(img[..., 0], [[0, 1]])


def test_load_image_one_channel_tiled_when_color(fake_ext):
    fake_ext.image = np.array([[[0], [51]]], dtype=np.uint8)
    img = cio.load_image("g.png", color=True)
    assert img.shape == (1, 2, 3)
    np.testing.assert_allclose(img[0, 1], [0.2, 0.2, 0.2], rtol=1e-6)


def test_load_image_drops_alpha(fake_ext):
    fake_ext.image = np.array([[[10, 20, 30, 40]]], dtype=np.uint8)  # BGRA
    img = cio.load_image("a.png")
    assert img.shape == (1, 1, 3)
    np.testing.assert_allclose(img[0, 0], np.array([30, 20, 10]) / 255.0, rtol=1e-6)


def test_load_image_error_propagates(fake_ext):
    fake_ext.error = IOError("cannot read image 'missing.png'")
    with pytest.raises(IOError, match="missing.png"):
        cio.load_image("missing.png")


def test_load_image_without_extension_raises_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "crema._crema", None)
    monkeypatch.delattr(crema, "_crema", raising=False)
    with pytest.raises(ImportError):
        cio.load_image("x.png")
    # The rest of the module does not need the extension.
    assert cio.datum_to_array(cio.array_to_datum(np.zeros((1, 1, 1)))).shape == (1, 1, 1)


def test_resize_image_bilinear_uses_extension(fake_ext):
    im = np.arange(2 * 3 * 5, dtype=np.float64).reshape(2, 3, 5)
    out = cio.resize_image(im, (4, 6))
    assert len(fake_ext.resize_calls) == 1
    passed, h, w = fake_ext.resize_calls[0]
    assert (h, w) == (4, 6)
    assert passed.dtype == np.float32 and passed.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(passed, im)
    assert out.shape == (4, 6, 5) and out.dtype == np.float32


def test_resize_image_constant_skips_interpolation(fake_ext):
    im = np.full((3, 4, 2), 0.7, dtype=np.float64)
    out = cio.resize_image(im, (5, 9))
    assert fake_ext.resize_calls == []
    assert out.shape == (5, 9, 2) and out.dtype == np.float32
    np.testing.assert_array_equal(out, np.float32(0.7))
    out0 = cio.resize_image(im, (2, 2), interp_order=0)
    np.testing.assert_array_equal(out0, np.float32(0.7))


def test_resize_image_same_size_is_copy(fake_ext):
    im = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    out = cio.resize_image(im, (2, 2))
    assert fake_ext.resize_calls == []
    np.testing.assert_array_equal(out, im)
    out[0, 0, 0] = 100
    assert im[0, 0, 0] == 0


def test_resize_image_nearest_numpy(fake_ext):
    im = np.arange(4, dtype=np.float32).reshape(2, 2, 1)
    up = cio.resize_image(im, (4, 4), interp_order=0)
    assert up.shape == (4, 4, 1) and up.dtype == np.float32
    np.testing.assert_array_equal(up[..., 0], [[0, 0, 1, 1],
                                               [0, 0, 1, 1],
                                               [2, 2, 3, 3],
                                               [2, 2, 3, 3]])
    im4 = np.arange(16, dtype=np.float32).reshape(4, 4, 1)
    down = cio.resize_image(im4, (2, 2), interp_order=0)
    np.testing.assert_array_equal(down[..., 0], [[5, 7], [13, 15]])
    # Any channel count.
    im7 = np.arange(2 * 3 * 7, dtype=np.float32).reshape(2, 3, 7)
    out = cio.resize_image(im7, (2, 6), interp_order=0)
    np.testing.assert_array_equal(out, np.repeat(im7, 2, axis=1))
    assert fake_ext.resize_calls == []


def test_resize_image_errors():
    with pytest.raises(ValueError, match="3-D"):
        cio.resize_image(np.zeros((4, 4)), (2, 2))
    with pytest.raises(ValueError, match="interp_order"):
        cio.resize_image(np.random.rand(4, 4, 3), (2, 2), interp_order=3)
    with pytest.raises(ValueError, match="new_dims"):
        cio.resize_image(np.random.rand(4, 4, 3), (2, 0))
    with pytest.raises(ValueError, match="new_dims"):
        cio.resize_image(np.random.rand(4, 4, 3), (2, 2, 2))


# ---------------------------------------------------------------------------
# load_image / resize_image with the real extension
# ---------------------------------------------------------------------------

RGB_PIXELS = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255]],
                       [[10, 20, 30], [200, 100, 50], [255, 255, 255]]],
                      dtype=np.uint8)


def test_real_load_image_color_png(real_ext, tmp_path):
    path = str(tmp_path / "rgb.png")
    write_png(path, RGB_PIXELS)
    img = cio.load_image(path)
    assert img.shape == (2, 3, 3) and img.dtype == np.float32
    np.testing.assert_allclose(img, RGB_PIXELS / 255.0, rtol=1e-6, atol=1e-7)


def test_real_load_image_grey_png(real_ext, tmp_path):
    grey = np.array([[0, 51, 102], [153, 204, 255]], dtype=np.uint8)
    path = str(tmp_path / "grey.png")
    write_png(path, grey)
    img = cio.load_image(path, color=False)
    assert img.shape == (2, 3, 1) and img.dtype == np.float32
    np.testing.assert_allclose(img[..., 0], grey / 255.0, rtol=1e-6, atol=1e-7)
    # A grey file loaded in colour has three equal channels.
    img3 = cio.load_image(path, color=True)
    assert img3.shape == (2, 3, 3)
    for c in range(3):
        np.testing.assert_allclose(img3[..., c], grey / 255.0, rtol=1e-6, atol=1e-7)


def test_real_load_image_color_file_as_grey(real_ext, tmp_path):
    path = str(tmp_path / "rgb.png")
    write_png(path, RGB_PIXELS)
    img = cio.load_image(path, color=False)
    assert img.shape == (2, 3, 1)
    rgb = RGB_PIXELS.astype(np.float64)
    luma = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
    np.testing.assert_allclose(img[..., 0] * 255.0, luma, atol=1.0)


def test_real_load_image_rgba_drops_alpha(real_ext, tmp_path):
    alpha = np.array([[255, 128, 0], [0, 64, 255]], dtype=np.uint8)
    rgba = np.concatenate([RGB_PIXELS, alpha[..., np.newaxis]], axis=2)
    path = str(tmp_path / "rgba.png")
    write_png(path, rgba)
    img = cio.load_image(path)
    assert img.shape == (2, 3, 3)
    np.testing.assert_allclose(img, RGB_PIXELS / 255.0, rtol=1e-6, atol=1e-7)


def test_real_load_image_missing_file(real_ext, tmp_path):
    path = str(tmp_path / "no_such_image.png")
    with pytest.raises((IOError, OSError, RuntimeError), match="no_such_image"):
        cio.load_image(path)


def test_real_load_image_not_an_image(real_ext, tmp_path):
    path = str(tmp_path / "not_an_image.png")
    with open(path, "wb") as f:
        f.write(b"this is not an image\n" * 10)
    with pytest.raises((IOError, OSError, RuntimeError), match="not_an_image"):
        cio.load_image(path)


@pytest.mark.parametrize("src,dst,channels", [((2, 3), (4, 6), 3),
                                              ((5, 4), (3, 7), 1),
                                              ((3, 3), (6, 2), 5)])
def test_real_resize_image_bilinear(real_ext, src, dst, channels):
    rng = np.random.RandomState(5)
    im = rng.rand(src[0], src[1], channels).astype(np.float32)
    out = cio.resize_image(im, dst)
    assert out.shape == (dst[0], dst[1], channels) and out.dtype == np.float32
    np.testing.assert_allclose(out, opencv_bilinear(im, *dst), atol=1e-4)


def test_real_resize_image_values_outside_unit_range(real_ext):
    im = np.array([[-100.0, 300.0]], dtype=np.float32).reshape(1, 2, 1)
    out = cio.resize_image(im, (1, 4))
    np.testing.assert_allclose(out[0, :, 0], [-100, 0, 200, 300], atol=1e-3)


def test_real_load_then_preprocess(real_ext, tmp_path):
    # The classic pycaffe pipeline: load RGB in [0, 1], resize, to BGR 0-255.
    path = str(tmp_path / "rgb.png")
    write_png(path, RGB_PIXELS)
    t = cio.Transformer({"data": (1, 3, 4, 6)})
    t.set_transpose("data", (2, 0, 1))
    t.set_channel_swap("data", (2, 1, 0))
    t.set_raw_scale("data", 255)
    out = t.preprocess("data", cio.load_image(path))
    assert out.shape == (3, 4, 6)
    expected = opencv_bilinear(RGB_PIXELS.astype(np.float64), 4, 6)
    np.testing.assert_allclose(out, expected[..., ::-1].transpose(2, 0, 1), atol=1e-3)
