#!/usr/bin/env python3
"""Writes an SSD face detector in the style of the widely deployed
res10_300x300_ssd one, as a Caffe-style deploy prototxt: a ResNet-10
backbone (conv1 7x7/2 with BatchNorm + Scale + ReLU, max pooling, four basic
residual blocks of 32, 64, 128 and 256 channels), an L2 Normalize layer
("conv4_3_norm", per position, one learned scale per channel starting at 20)
on the 38x38 map, extra layers conv6 .. conv9, SSD300's heads (minimum box
sizes 30 to 264 pixels, steps 8 to 300) and DetectionOutput for two classes
(background, face; NMS 0.45 over the best 400, keep 200, confidence 0.01).

  make_ssd_face.py [--batch N] [--size S] [OUT]   (default: batch 1, 300)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, main, params, ssd_heads  # noqa: E402


def conv_bn(net, name, bottom, outputs, kernel, stride=1, relu=True):
    top = net.bn_scale(name, net.conv(name, bottom, outputs, kernel, stride=stride, bias=False))
    return net.relu(f"{name}/relu", top) if relu else top


def basic_block(net, name, bottom, outputs, stride, projection):
    """Two 3x3 convolutions plus the input (or its 1x1 projection), ReLU."""
    branch = conv_bn(net, f"{name}_branch2a", bottom, outputs, 3, stride=stride)
    branch = conv_bn(net, f"{name}_branch2b", branch, outputs, 3, relu=False)
    shortcut = (conv_bn(net, f"{name}_branch1", bottom, outputs, 1, stride=stride, relu=False)
                if projection else bottom)
    top = net.layer(name, "Eltwise", [shortcut, branch], name)
    return net.relu(f"{name}/relu", top)


def ssd_face(batch, size):
    net = NetWriter("SSD-face-res10")
    top = conv_bn(net, "conv1", net.input("data", [batch, 3, size, size]), 32, 7, stride=2)
    top = net.pool("pool1", top, "MAX", kernel=3, stride=2)
    top = basic_block(net, "layer_64_1", top, 32, 1, projection=False)
    top = basic_block(net, "layer_128_1", top, 64, 2, projection=True)
    conv4_3 = basic_block(net, "layer_256_1", top, 128, 1, projection=True)
    net.layer("conv4_3_norm", "Normalize", conv4_3, "conv4_3_norm",
              params("norm_param", across_spatial=False, channel_shared=False,
                     scale_filler={"type": "constant", "value": 20}))
    fc7 = basic_block(net, "layer_512_1", conv4_3, 256, 2, projection=True)
    top = fc7
    extras = {}
    for index, inner, outputs, stride, pad in ((6, 128, 256, 2, 1), (7, 64, 128, 2, 1),
                                               (8, 64, 128, 1, 0), (9, 64, 128, 1, 0)):
        top = net.relu(f"conv{index}_1/relu", net.conv(f"conv{index}_1", top, inner, 1))
        top = net.conv(f"conv{index}_2", top, outputs, 3, stride=stride, pad=pad)
        extras[index] = net.relu(f"conv{index}_2/relu", top)
    sources = [("conv4_3_norm", 30, 60, [2], 8), (fc7, 60, 111, [2, 3], 16),
               (extras[6], 111, 162, [2, 3], 32), (extras[7], 162, 213, [2, 3], 64),
               (extras[8], 213, 264, [2], 100), (extras[9], 264, 315, [2], 300)]
    ssd_heads(net, "data", sources, num_classes=2, top_k=400, keep_top_k=200,
              confidence_threshold=0.01)
    return net.text()


if __name__ == "__main__":
    main(__doc__, ssd_face, size=300, min_size=64)
