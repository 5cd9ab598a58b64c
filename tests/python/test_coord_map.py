"""crema.coord_map (pycaffe's caffe.coord_map): each layer's map, their
composition through conv/pool/deconv/crop chains, the Crop layers that
crop() writes (run in Crema: the cropped blob has the target's shape), and
the refusals. The expected maps are worked out by hand in each test: a
convolution of kernel k, stride s, pad p puts input x at (x + p - (k-1)/2) / s;
a deconvolution puts x at s * x + (k-1)/2 - p."""
import numpy as np
import pytest

import crema
from crema import layers as L, params as P
from crema.coord_map import (AxisMismatchException, UndefinedMapException, compose,
                             coord_map, coord_map_from_to, crop, inverse)


def data(*dims):
    return L.Input(shape=dict(dim=list(dims)))


def conv(bottom, **kwargs):
    return L.Convolution(bottom, num_output=2, weight_filler=dict(type="xavier"), **kwargs)


def run(tmp_path, **tops):
    """Builds the NetSpec tops as a Crema net; returns {name: shape}."""
    spec = crema.NetSpec()
    for name, top in tops.items():
        setattr(spec, name, top)
    path = tmp_path / "net.prototxt"
    path.write_text(str(spec.to_proto()))
    net = crema.Net(str(path), crema.TEST)
    return {name: net.blobs[name].data.shape for name in tops}


def assert_map(actual, axis, a, b):
    assert actual[0] == axis
    np.testing.assert_allclose(np.broadcast_to(actual[1], np.shape(a)), a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.broadcast_to(actual[2], np.shape(b)), b, rtol=0, atol=1e-12)


def test_single_layer_maps():
    x = data(1, 1, 20, 20)
    assert_map(coord_map(conv(x, kernel_size=5, stride=2, pad=1).fn), 1, [0.5], [-0.5])
    assert_map(coord_map(L.Pooling(x, pool=P.Pooling.MAX, kernel_size=3, stride=2).fn),
               1, [0.5], [-0.5])
    # The message form and a dilation (kernel 3, dilation 2: extent 5).
    assert_map(coord_map(conv(x, convolution_param=dict(kernel_size=3, dilation=2,
                                                       pad=2)).fn), 1, [1], [0])
    assert_map(coord_map(L.Deconvolution(x, convolution_param=dict(
        num_output=1, kernel_size=4, stride=2, pad=1)).fn), 1, [2], [0.5])
    assert_map(coord_map(L.ReLU(x).fn), None, 1, 0)
    assert_map(coord_map(L.Crop(x, x, axis=2, offset=[3, 4]).fn), 1, [1], [-3, -4])
    with pytest.raises(UndefinedMapException):
        coord_map(L.InnerProduct(x, num_output=3).fn)
    with pytest.raises(UndefinedMapException):
        coord_map(L.Pooling(x, global_pooling=True).fn)


def test_compose_and_inverse():
    assert_map(compose((1, 2.0, 3.0), (None, 0.5, 1.0)), 1, 1.0, 5.0)  # 2 (0.5 x + 1) + 3
    assert_map(inverse((1, 4.0, -2.0)), 1, 0.25, 0.5)
    with pytest.raises(AxisMismatchException):
        compose((1, 1, 0), (2, 1, 0))


def test_conv_pool_deconv_chain_and_its_crop(tmp_path):
    # data -> conv k3 p5 (x + 4) -> pool k2 s2 (x/2 - 1/4) -> conv k3 (x - 1)
    # -> deconv k4 s2 (2x + 3/2): data x lands at deconv x + 3.
    x = data(1, 1, 20, 20)
    c1 = conv(x, kernel_size=3, pad=5)
    p1 = L.Pooling(c1, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    c2 = conv(p1, kernel_size=3)
    up = L.Deconvolution(c2, convolution_param=dict(num_output=2, kernel_size=4, stride=2))
    assert_map(coord_map_from_to(x, up), 1, [1], [3])
    assert_map(coord_map_from_to(up, x), 1, [1], [-3])
    assert_map(coord_map_from_to(x, p1), 1, [0.5], [1.75])
    cropped = crop(up, x)
    assert cropped.fn.type_name == "Crop"
    assert cropped.fn.params["crop_param"] == dict(axis=2, offset=[3])
    shapes = run(tmp_path, data=x, up=up, score=cropped)
    assert shapes["up"] == (1, 2, 26, 26) and shapes["score"] == (1, 2, 20, 20)


def test_pass_through_layers_change_nothing(tmp_path):
    x = data(1, 1, 16, 16)
    plain = conv(x, kernel_size=3, stride=2)
    through = L.Dropout(L.Scale(L.BatchNorm(L.ReLU(conv(x, kernel_size=3, stride=2))),
                                bias_term=True))
    assert coord_map_from_to(x, plain)[1:] == coord_map_from_to(x, through)[1:]
    assert_map(coord_map_from_to(x, through), 1, [0.5], [-0.5])
    summed = L.Eltwise(plain, through)
    assert_map(coord_map_from_to(x, summed), 1, [0.5], [-0.5])


def test_padding_gives_the_crop_offset(tmp_path):
    for pad, offset in ((1, 0), (2, 1), (7, 6)):
        x = data(1, 1, 12, 12)
        padded = conv(x, kernel_size=3, pad=pad)  # x lands at x + pad - 1
        assert_map(coord_map_from_to(x, padded), 1, [1], [pad - 1])
        cropped = crop(padded, x)
        assert cropped.fn.params["crop_param"]["offset"] == [offset]
        assert run(tmp_path, data=x, cropped=cropped)["cropped"] == (1, 2, 12, 12)


def test_rectangular_kernels_map_each_axis(tmp_path):
    x = data(1, 1, 30, 40)
    legacy = conv(x, kernel_h=3, kernel_w=5, stride_h=1, stride_w=2, pad_h=1, pad_w=0)
    listed = conv(x, kernel_size=[3, 5], stride=[1, 2], pad=[1, 0])
    for top in (legacy, listed):
        # height: (y + 1 - 1) / 1; width: (x + 0 - 2) / 2
        assert_map(coord_map_from_to(x, top), 1, [1, 0.5], [0, -1])
    # A 1x1 convolution with per-axis pads, cropped back to the input.
    wide = conv(x, kernel_size=1, pad=[2, 5])
    cropped = crop(wide, x)
    assert cropped.fn.params["crop_param"] == dict(axis=2, offset=[2, 5])
    assert run(tmp_path, data=x, wide=wide, cropped=cropped)["cropped"] == (1, 2, 30, 40)


def test_nd_convolution_maps_three_axes():
    x = data(1, 1, 10, 20, 30)
    top = conv(x, kernel_size=[3, 5, 7], stride=[1, 2, 3], pad=[1, 2, 4])
    # (d + 1 - 1) / 1, (h + 2 - 2) / 2, (w + 4 - 3) / 3
    assert_map(coord_map_from_to(x, top), 1, [1, 0.5, 1 / 3.0], [0, 0, 1 / 3.0])


def test_crop_of_a_crop(tmp_path):
    x = data(1, 1, 10, 10)
    big = conv(x, kernel_size=1, pad=4)     # x + 4, 18 pixels
    mid = conv(x, kernel_size=1, pad=2)     # x + 2, 14 pixels
    first = crop(big, mid)
    assert first.fn.params["crop_param"]["offset"] == [2]
    second = crop(first, x)                 # first has mid's grid: x + 2
    assert second.fn.params["crop_param"]["offset"] == [2]
    shapes = run(tmp_path, data=x, big=big, mid=mid, first=first, second=second)
    assert shapes["first"] == (1, 2, 14, 14) and shapes["second"] == (1, 2, 10, 10)


def test_stride_three_round_trip_is_whole():
    # conv k3 s3 then deconv k3 s3: 3 ((x - 1) / 3) + 1 = x, within rounding.
    x = data(1, 1, 18, 18)
    down = conv(x, kernel_size=3, stride=3)
    up = L.Deconvolution(down, convolution_param=dict(num_output=2, kernel_size=3, stride=3))
    assert crop(up, x).fn.params["crop_param"]["offset"] == [0]


def test_fcn_skip_branch_is_cropped_to_the_upsampled_scores(tmp_path):
    # FCN-16s's shape of problem: a pool4-level score map and the upsampled
    # deeper scores are cropped to each other, summed, upsampled, and cropped
    # to the input.
    x = data(1, 3, 32, 32)
    c1 = conv(x, kernel_size=3, pad=20)
    p1 = L.Pooling(c1, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    p2 = L.Pooling(p1, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    score_deep = conv(p2, kernel_size=3)
    up2 = L.Deconvolution(score_deep, convolution_param=dict(num_output=2, kernel_size=4,
                                                             stride=2, bias_term=False))
    score_skip = conv(p1, kernel_size=1)
    fused = L.Eltwise(up2, crop(score_skip, up2))
    up = L.Deconvolution(fused, convolution_param=dict(num_output=2, kernel_size=4, stride=2,
                                                       bias_term=False))
    score = crop(up, x)
    shapes = run(tmp_path, data=x, score_skip=score_skip, up2=up2, fused=fused, up=up,
                 score=score)
    assert shapes["score"] == (1, 2, 32, 32)


def test_refusals():
    x = data(1, 1, 20, 20)
    other = data(1, 1, 20, 20)
    with pytest.raises(RuntimeError, match="Could not compute map between tops"):
        coord_map_from_to(conv(x, kernel_size=3), other)
    pooled = L.Pooling(x, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    with pytest.raises(AssertionError, match="scale mismatch on crop"):
        crop(pooled, x)
    padded = conv(x, kernel_size=3, pad=3)
    with pytest.raises(AssertionError, match="cannot crop negative offset"):
        crop(x, padded)  # x is the smaller one
    half = conv(x, kernel_size=2, pad=1)  # x + 1/2
    with pytest.raises(AssertionError, match="cannot crop noninteger offset"):
        crop(half, x)
    # A global pooling has no map: nothing joins its top to the input.
    with pytest.raises(RuntimeError, match="Could not compute map"):
        coord_map_from_to(L.Pooling(x, global_pooling=True), x)
