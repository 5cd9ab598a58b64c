#!/usr/bin/env python3
"""Writes a MobileNet-SSD detector as a Caffe-style deploy prototxt, in the
layout of the widely used Caffe MobileNet-SSD (300x300 input, 21 VOC classes,
BatchNorm merged into each convolution's bias): a MobileNet v1 backbone
(conv0 3x3/2, then depthwise "convN/dw" and pointwise "convN" pairs with
ReLU), four extra pairs conv14_1/2 .. conv17_1/2 (1x1 then 3x3/2), and SSD
heads on conv11, conv13, conv14_2, conv15_2, conv16_2 and conv17_2 (minimum
box sizes 60 to 285 pixels, aspect ratios 2 and 3), ending in
DetectionOutput (CENTER_SIZE boxes, NMS 0.45, confidence 0.25).

  make_mobilenet_ssd.py [--batch N] [--size S] [OUT]   (default: batch 1, 300)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, main, ssd_heads  # noqa: E402

# (depthwise stride, pointwise outputs) of conv1 .. conv13.
BLOCKS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512), (1, 512), (1, 512),
          (1, 512), (1, 512), (1, 512), (2, 1024), (1, 1024)]
EXTRAS = [(14, 256, 512), (15, 128, 256), (16, 128, 256), (17, 64, 128)]


def conv_relu(net, name, bottom, outputs, kernel, stride=1, group=1):
    top = net.conv(name, bottom, outputs, kernel, stride=stride, group=group)
    return net.relu(f"{name}/relu", top)


def mobilenet_ssd(batch, size):
    net = NetWriter("MobileNet-SSD")
    top = conv_relu(net, "conv0", net.input("data", [batch, 3, size, size]), 32, 3, stride=2)
    channels = 32
    for index, (stride, outputs) in enumerate(BLOCKS, start=1):
        top = conv_relu(net, f"conv{index}/dw", top, channels, 3, stride=stride, group=channels)
        top = conv_relu(net, f"conv{index}", top, outputs, 1)
        channels = outputs
    for index, inner, outputs in EXTRAS:
        top = conv_relu(net, f"conv{index}_1", top, inner, 1)
        top = conv_relu(net, f"conv{index}_2", top, outputs, 3, stride=2)
    sources = [("conv11", 60, None, [2], None), ("conv13", 105, 150, [2, 3], None),
               ("conv14_2", 150, 195, [2, 3], None), ("conv15_2", 195, 240, [2, 3], None),
               ("conv16_2", 240, 285, [2, 3], None), ("conv17_2", 285, 300, [2, 3], None)]
    ssd_heads(net, "data", sources, num_classes=21)
    return net.text()


if __name__ == "__main__":
    main(__doc__, mobilenet_ssd, size=300, min_size=64)
