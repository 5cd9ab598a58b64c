#!/usr/bin/env python3
"""Writes a ShuffleNet v1 (Zhang et al., "ShuffleNet", 2017, table 1; 1x,
g = 3) as a Caffe-style deploy prototxt in the layout of the Caffe ShuffleNet
fork: each unit is a grouped 1x1 convolution, ShuffleChannel, a 3x3
depthwise convolution of the fork's type "ConvolutionDepthwise" and a grouped
1x1 convolution, each with BatchNorm + Scale (ReLU after the first); a
stride-2 unit concatenates a 3x3/2 AVE pooling of its input, a stride-1 unit
adds its input. The last unit of each stage is a squeeze-and-excitation unit
(Hu et al., "Squeeze-and-Excitation Networks", 2017) whose channel weights
scale the branch and add the input in one Axpy layer, as the Caffe SENet
release writes it.

  make_shufflenet.py [--batch N] [--size S] [OUT]   (default: batch 1, 224)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, main, params  # noqa: E402

GROUPS = 3
STAGES = [(2, 240, 4), (3, 480, 8), (4, 960, 4)]  # (stage, outputs, units)


def conv_bn(net, name, bottom, outputs, kernel, stride=1, group=1, kind="Convolution",
            relu=False):
    top = net.bn_scale(name, net.conv(name, bottom, outputs, kernel, stride=stride, bias=False,
                                      group=group, kind=kind))
    return net.relu(f"{name}/relu", top) if relu else top


def squeeze_excite(net, name, bottom, channels):
    """Channel weights in (0, 1) from the branch's global average."""
    top = net.pool(f"{name}/squeeze", bottom, "AVE", global_pooling=True)
    top = net.relu(f"{name}/down/relu", net.conv(f"{name}/down", top, channels // 12, 1))
    top = net.conv(f"{name}/up", top, channels, 1)
    return net.layer(f"{name}/prob", "Sigmoid", top, f"{name}/prob")


def unit(net, name, bottom, inputs, outputs, stride, first_group, excite):
    bottleneck = outputs // 4
    branch_outputs = outputs - inputs if stride == 2 else outputs
    top = conv_bn(net, f"{name}/gconv1", bottom, bottleneck, 1, group=first_group, relu=True)
    top = net.layer(f"{name}/shuffle", "ShuffleChannel", top, f"{name}/shuffle",
                    params("shuffle_channel_param", group=first_group))
    top = conv_bn(net, f"{name}/dwconv", top, bottleneck, 3, stride=stride,
                  kind="ConvolutionDepthwise")
    top = conv_bn(net, f"{name}/gconv2", top, branch_outputs, 1, group=GROUPS)
    if stride == 2:
        shortcut = net.pool(f"{name}/shortcut", bottom, "AVE", kernel=3, stride=2)
        top = net.layer(f"{name}/concat", "Concat", [shortcut, top], f"{name}/concat")
    elif excite:
        weights = squeeze_excite(net, f"{name}/se", top, outputs)
        top = net.layer(f"{name}/axpy", "Axpy", [weights, top, bottom], f"{name}/axpy")
    else:
        top = net.layer(f"{name}/add", "Eltwise", [bottom, top], f"{name}/add")
    return net.relu(f"{name}/relu", top)


def shufflenet(batch, size):
    net = NetWriter("ShuffleNet-g3")
    top = conv_bn(net, "conv1", net.input("data", [batch, 3, size, size]), 24, 3, stride=2,
                  relu=True)
    top = net.pool("pool1", top, "MAX", kernel=3, stride=2)
    channels = 24
    for stage, outputs, units in STAGES:
        for index in range(1, units + 1):
            first_group = 1 if (stage == 2 and index == 1) else GROUPS
            top = unit(net, f"stage{stage}_{index}", top, channels, outputs,
                       2 if index == 1 else 1, first_group, excite=index == units)
            channels = outputs
    net.pool("pool5", top, "AVE", global_pooling=True)
    net.conv("fc", "pool5", 1000, 1)
    net.layer("prob", "Softmax", "fc", "prob")
    return net.text()


if __name__ == "__main__":
    main(__doc__, shufflenet, size=224, min_size=32)
