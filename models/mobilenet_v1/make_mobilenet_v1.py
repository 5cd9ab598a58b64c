#!/usr/bin/env python3
"""Writes MobileNet v1 (Howard et al., "MobileNets", 2017, table 1; width 1.0)
as a Caffe-style deploy prototxt, laid out as the Caffe MobileNets are: each
3x3 depthwise convolution ("/dw", Convolution with group = channels) and each
1x1 pointwise one ("/sep") without bias, followed by BatchNorm + Scale and
ReLU in place; global AVE pooling, the classifier as a 1x1 convolution
("fc7"), Softmax.

  make_mobilenet_v1.py [--batch N] [--size S] [--depthwise TYPE] [OUT]
      (default: batch 1, 224x224 input, depthwise as "Convolution")
--depthwise ConvolutionDepthwise or DepthwiseConvolution writes the forks'
depthwise types instead (the same arithmetic and weights).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, main  # noqa: E402

# (name, depthwise stride, pointwise outputs), after conv1 (3x3/2, 32).
BLOCKS = [("conv2_1", 1, 64), ("conv2_2", 2, 128), ("conv3_1", 1, 128), ("conv3_2", 2, 256),
          ("conv4_1", 1, 256), ("conv4_2", 2, 512), ("conv5_1", 1, 512), ("conv5_2", 1, 512),
          ("conv5_3", 1, 512), ("conv5_4", 1, 512), ("conv5_5", 1, 512), ("conv5_6", 2, 1024),
          ("conv6", 1, 1024)]


def backbone(net, bottom, depthwise="Convolution", blocks=BLOCKS):
    """conv1 and the depthwise-separable blocks; returns the last top."""
    top = net.bn_scale("conv1", net.conv("conv1", bottom, 32, 3, stride=2, bias=False))
    net.relu("relu1", top)
    channels = 32
    for name, stride, outputs in blocks:
        dw = net.conv(f"{name}/dw", top, channels, 3, stride=stride, bias=False,
                      group=channels if depthwise == "Convolution" else 1, kind=depthwise)
        net.relu(f"relu{name[4:]}/dw", net.bn_scale(f"{name}/dw", dw))
        top = net.conv(f"{name}/sep", dw, outputs, 1, bias=False)
        net.relu(f"relu{name[4:]}/sep", net.bn_scale(f"{name}/sep", top))
        channels = outputs
    return top


def mobilenet_v1(batch, size, depthwise):
    net = NetWriter("MobileNet-v1")
    top = backbone(net, net.input("data", [batch, 3, size, size]), depthwise)
    net.pool("pool6", top, "AVE", global_pooling=True)
    net.conv("fc7", "pool6", 1000, 1)
    net.layer("prob", "Softmax", "fc7", "prob")
    return net.text()


if __name__ == "__main__":
    main(__doc__, mobilenet_v1, size=224, min_size=32, depthwise="Convolution")
