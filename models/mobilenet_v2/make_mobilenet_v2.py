#!/usr/bin/env python3
"""Writes MobileNet v2 (Sandler et al., "MobileNetV2: Inverted Residuals and
Linear Bottlenecks", 2018, table 2; width 1.0) as a Caffe-style deploy
prototxt in the layout of the Caffe MobileNet v2 forks: each inverted
residual block is a 1x1 expansion (skipped when the expansion is 1), a 3x3
depthwise convolution of the fork's type "DepthwiseConvolution", each with
BatchNorm + Scale and ReLU6, then a linear 1x1 projection with BatchNorm +
Scale, and an Eltwise SUM with the block's input where stride and width
allow; a 1x1 convolution to 1280, global AVE pooling, the classifier as a 1x1
convolution, Softmax.

  make_mobilenet_v2.py [--batch N] [--size S] [--depthwise TYPE] [OUT]
      (default: batch 1, 224x224 input, depthwise as "DepthwiseConvolution")
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, main  # noqa: E402

# (expansion t, outputs c, repeats n, first stride s), after conv1 (3x3/2, 32).
STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
          (6, 160, 3, 2), (6, 320, 1, 1)]


def conv_bn(net, name, bottom, outputs, kernel, stride=1, group=1, kind="Convolution", relu=True):
    top = net.bn_scale(name, net.conv(name, bottom, outputs, kernel, stride=stride, bias=False,
                                      group=group, kind=kind))
    if relu:
        net.relu(f"{name}/relu", top, kind="ReLU6")
    return top


def mobilenet_v2(batch, size, depthwise):
    net = NetWriter("MobileNet-v2")
    top = conv_bn(net, "conv1", net.input("data", [batch, 3, size, size]), 32, 3, stride=2)
    channels = 32
    for stage, (t, c, n, s) in enumerate(STAGES, start=2):
        for repeat in range(1, n + 1):
            name = f"conv{stage}_{repeat}"
            stride = s if repeat == 1 else 1
            block_input = top
            hidden = channels * t
            if t != 1:
                top = conv_bn(net, f"{name}/expand", top, hidden, 1)
            top = conv_bn(net, f"{name}/dwise", top, hidden, 3, stride=stride,
                          group=hidden if depthwise == "Convolution" else 1, kind=depthwise)
            top = conv_bn(net, f"{name}/linear", top, c, 1, relu=False)
            if stride == 1 and channels == c:
                top = net.layer(f"block_{stage}_{repeat}", "Eltwise", [block_input, top],
                                f"block_{stage}_{repeat}")
            channels = c
    top = conv_bn(net, "conv9", top, 1280, 1)
    net.pool("pool9", top, "AVE", global_pooling=True)
    net.conv("fc10", "pool9", 1000, 1)
    net.layer("prob", "Softmax", "fc10", "prob")
    return net.text()


if __name__ == "__main__":
    main(__doc__, mobilenet_v2, size=224, min_size=32, depthwise="DepthwiseConvolution")
