#!/usr/bin/env python3
"""Writes a small semantic-segmentation net as a Caffe-style deploy prototxt
that speaks the segmentation forks' dialects:
- an encoder of 3x3 convolutions, each with the BN layer of PSPNet (frozen:
  the stored mean and variance) and ReLU, with 2x2 max pooling that also
  writes its argmax mask; a DeepLab-style dilated convolution; the input
  shrunk by Interp (shrink_factor 2) and concatenated after the first pool,
  as DeepLab's multi-scale inputs are;
- a PSPNet-style pyramid branch: 4x4 average pooling, a 1x1 convolution with
  BN and ReLU, and Interp back to the feature size (explicit height and
  width);
- a SegNet decoder: Upsample by each pooling's mask, convolutions with
  SegNet's BN (bn_mode INFERENCE: a per-channel scale and shift);
- 21-class scores at full size ("score") and an auxiliary head interpolated
  to the input's size by Interp's second bottom ("score_aux").

  make_segmentation.py [--batch N] [--size S] [OUT]   (default: batch 1, 128)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, main, params  # noqa: E402

CLASSES = 21
PSPNET_BN = params("bn_param", slope_filler={"type": "constant", "value": 1},
                   bias_filler={"type": "constant", "value": 0}, frozen=True)
SEGNET_BN = params("bn_param", scale_filler={"type": "constant", "value": 1},
                   shift_filler={"type": "constant", "value": 0}, bn_mode="INFERENCE")


def conv_bn_relu(net, name, bottom, outputs, kernel=3, dilation=1, bn=PSPNET_BN):
    top = net.conv(name, bottom, outputs, kernel, dilation=dilation)
    net.layer(f"{name}/bn", "BN", top, top, bn)
    return net.relu(f"{name}/relu", top)


def segmentation(batch, size):
    net = NetWriter("Segmentation-forks")
    data = net.input("data", [batch, 3, size, size])
    top = conv_bn_relu(net, "conv1", data, 32)
    pool1 = net.pool("pool1", top, "MAX", kernel=2, stride=2, tops=["pool1", "pool1_mask"])
    half = net.layer("data_half", "Interp", data, "data_half",
                     params("interp_param", shrink_factor=2))
    top = net.layer("concat1", "Concat", [pool1, half], "concat1")
    top = conv_bn_relu(net, "conv2", top, 64)
    pool2 = net.pool("pool2", top, "MAX", kernel=2, stride=2, tops=["pool2", "pool2_mask"])
    conv3 = conv_bn_relu(net, "conv3", pool2, 128, dilation=2)
    quarter = size // 4
    top = net.pool("psp_pool", conv3, "AVE", kernel=4, stride=4)
    top = conv_bn_relu(net, "psp_conv", top, 32, kernel=1)
    psp = net.layer("psp_interp", "Interp", top, "psp_interp",
                    params("interp_param", height=quarter, width=quarter))
    features = net.layer("psp_concat", "Concat", [conv3, psp], "psp_concat")
    net.conv("conv_aux", features, CLASSES, 1)
    net.layer("score_aux", "Interp", ["conv_aux", data], "score_aux")
    top = net.conv("conv4", features, 64, 1)
    top = net.layer("upsample2", "Upsample", [top, "pool2_mask"], "upsample2",
                    params("upsample_param", scale=2))
    top = conv_bn_relu(net, "conv_dec2", top, 32, bn=SEGNET_BN)
    top = net.layer("upsample1", "Upsample", [top, "pool1_mask"], "upsample1",
                    params("upsample_param", upsample_h=size, upsample_w=size))
    top = conv_bn_relu(net, "conv_dec1", top, 32, bn=SEGNET_BN)
    net.conv("score", top, CLASSES, 1)
    return net.text()


if __name__ == "__main__":
    main(__doc__, segmentation, size=128, min_size=16, size_multiple=16)
