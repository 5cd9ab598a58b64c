#!/usr/bin/env python3
"""Build an FCN-style segmentation net with caffe.NetSpec and let
caffe.coord_map work out its Crop layers: the padded first convolution makes
every score map larger than the input, and crop(top_from, top_to) finds the
offsets that put each one back on its target's grid.

  examples/fcn_crop.py [--size 64] [--classes 5] [--prototxt fcn.prototxt]

Prints each Crop's offset and the blob shapes of the net run once in Crema
(random weights), and checks that the scores have the input's height and
width.
"""
import argparse
import os
import sys

import numpy as np

import crema as caffe
from crema import layers as L, params as P
from crema.coord_map import coord_map_from_to, crop


def conv_relu(bottom, channels, **kwargs):
    conv = L.Convolution(bottom, num_output=channels, weight_filler=dict(type="xavier"),
                         **kwargs)
    return conv, L.ReLU(conv, in_place=True)


def max_pool(bottom):
    return L.Pooling(bottom, pool=P.Pooling.MAX, kernel_size=2, stride=2)


def upsample(bottom, classes, factor):
    """A learnable deconvolution that scales by `factor` (kernel 2 x factor)."""
    return L.Deconvolution(bottom, convolution_param=dict(
        num_output=classes, kernel_size=2 * factor, stride=factor, bias_term=False,
        weight_filler=dict(type="bilinear")), param=[dict(lr_mult=0)])


def fcn(size, classes):
    """A two-pool FCN with one skip: scores at 1/4 are upsampled 2x, cropped
    to the scores at 1/2 and summed with them, then upsampled 2x and cropped
    to the input."""
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 3, size, size]))
    # FCN's trick: a large pad, so that no input pixel falls off the edges;
    # the score maps come out larger than the input and are cropped back.
    n.conv1, n.relu1 = conv_relu(n.data, 16, kernel_size=3, pad=20)
    n.pool1 = max_pool(n.relu1)
    n.conv2, n.relu2 = conv_relu(n.pool1, 32, kernel_size=3)
    n.pool2 = max_pool(n.relu2)
    n.score_deep = L.Convolution(n.pool2, num_output=classes, kernel_size=1)
    n.up_deep = upsample(n.score_deep, classes, 2)
    n.score_skip = L.Convolution(n.pool1, num_output=classes, kernel_size=1)
    n.deep_cropped = crop(n.up_deep, n.score_skip)
    n.fused = L.Eltwise(n.deep_cropped, n.score_skip)
    n.up = upsample(n.fused, classes, 2)
    n.score = crop(n.up, n.data)
    return n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=64, help="input height and width")
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--prototxt", help="also write the net here")
    args = parser.parse_args()
    if "GLOG_minloglevel" not in os.environ:
        caffe.init_log(1)

    n = fcn(args.size, args.classes)
    for name in ("deep_cropped", "score"):
        params = getattr(n, name).fn.params["crop_param"]
        print("%-12s Crop axis %d offset %s" % (name, params["axis"], params["offset"]))
    axis, a, b = coord_map_from_to(n.data, n.up)
    print("map data -> up: axis %d, scale %s, shift %s" % (axis, np.ravel(a), np.ravel(b)))

    text = str(n.to_proto())
    path = args.prototxt or os.path.join("/tmp", "fcn_crop_%d.prototxt" % os.getpid())
    with open(path, "w") as f:
        f.write(text)
    try:
        caffe.set_random_seed(1)
        net = caffe.Net(path, caffe.TEST)
    finally:
        if not args.prototxt:
            os.remove(path)
    net.blobs["data"].data[...] = np.random.RandomState(0).rand(*net.blobs["data"].data.shape)
    net.forward()
    for name in ("data", "conv1", "pool1", "pool2", "up_deep", "score_skip", "deep_cropped", "up",
                 "score"):
        print("%-12s %s" % (name, "x".join(str(d) for d in net.blobs[name].data.shape)))
    if net.blobs["score"].data.shape[2:] != net.blobs["data"].data.shape[2:]:
        sys.exit("fcn_crop.py: the scores do not have the input's size")
    print("scores have the input's %dx%d" % tuple(net.blobs["data"].data.shape[2:]))


if __name__ == "__main__":
    main()
