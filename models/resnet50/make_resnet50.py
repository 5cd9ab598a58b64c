#!/usr/bin/env python3
"""Writes ResNet-50 as a Caffe-style deploy prototxt: the published
architecture (He, Zhang, Ren, Sun, "Deep Residual Learning for Image
Recognition", 2015, table 1, 50-layer column), laid out as its Caffe release
was: every convolution without bias and followed by BatchNorm
(use_global_stats) and Scale (bias_term) in place, the stride of a stage's
first block on its 1x1 convolutions (branch1 and branch2a), Eltwise SUM of the
two branches, ReLU in place, MAX pooling 3x3/2 after conv1 and AVE 7x7 before
fc1000.

Without trained weights (for timing), every convolution is drawn He-style
(msra) and fc1000 from a Gaussian; a BatchNorm with no statistics yet divides
by sqrt(eps), so each Scale starts at sqrt(eps) and the values stay finite
through the 50 layers.

  make_resnet50.py [--batch N] [OUT]      (default: batch 1, standard output)
"""
import argparse
import sys

STAGES = [  # (stage, blocks, bottleneck width, output width, first stride)
    (2, 3, 64, 256, 1),
    (3, 4, 128, 512, 2),
    (4, 6, 256, 1024, 2),
    (5, 3, 512, 2048, 2),
]


def layer(name, kind, bottoms, tops, body=""):
    lines = [f'layer {{', f'  name: "{name}"', f'  type: "{kind}"']
    lines += [f'  bottom: "{b}"' for b in bottoms]
    lines += [f'  top: "{t}"' for t in tops]
    if body:
        lines.append("  " + body)
    lines.append("}")
    return "\n".join(lines)


def conv_bn(out, name, bn, scale, bottom, channels, kernel, stride, pad, relu):
    """A convolution, its BatchNorm and Scale in place, and a ReLU if asked."""
    stride_text = f" stride: {stride}" if stride != 1 else ""
    pad_text = f" pad: {pad}" if pad else ""
    out.append(layer(name, "Convolution", [bottom], [name],
                     f"convolution_param {{ num_output: {channels} kernel_size: {kernel}"
                     f"{pad_text}{stride_text} bias_term: false weight_filler {{ type: \"msra\" }} }}"))
    out.append(layer(bn, "BatchNorm", [name], [name],
                     "batch_norm_param { use_global_stats: true }"))
    out.append(layer(scale, "Scale", [name], [name], "scale_param { bias_term: true filler { type: \"constant\" value: 0.0031623 } }"))
    if relu:
        out.append(layer(f"{name}_relu", "ReLU", [name], [name]))
    return name


def block(out, stage, letter, bottom, width, channels, stride, projection):
    tag = f"{stage}{letter}"
    if projection:
        shortcut = conv_bn(out, f"res{tag}_branch1", f"bn{tag}_branch1", f"scale{tag}_branch1",
                           bottom, channels, 1, stride, 0, relu=False)
    else:
        shortcut = bottom
    top = conv_bn(out, f"res{tag}_branch2a", f"bn{tag}_branch2a", f"scale{tag}_branch2a",
                  bottom, width, 1, stride, 0, relu=True)
    top = conv_bn(out, f"res{tag}_branch2b", f"bn{tag}_branch2b", f"scale{tag}_branch2b",
                  top, width, 3, 1, 1, relu=True)
    top = conv_bn(out, f"res{tag}_branch2c", f"bn{tag}_branch2c", f"scale{tag}_branch2c",
                  top, channels, 1, 1, 0, relu=False)
    out.append(layer(f"res{tag}", "Eltwise", [shortcut, top], [f"res{tag}"]))
    out.append(layer(f"res{tag}_relu", "ReLU", [f"res{tag}"], [f"res{tag}"]))
    return f"res{tag}"


def resnet50(batch):
    out = ['name: "ResNet-50"',
           layer("data", "Input", [], ["data"],
                 f"input_param {{ shape: {{ dim: {batch} dim: 3 dim: 224 dim: 224 }} }}")]
    top = conv_bn(out, "conv1", "bn_conv1", "scale_conv1", "data", 64, 7, 2, 3, relu=True)
    out.append(layer("pool1", "Pooling", [top], ["pool1"],
                     "pooling_param { pool: MAX kernel_size: 3 stride: 2 }"))
    top = "pool1"
    for stage, blocks, width, channels, stride in STAGES:
        for i in range(blocks):
            letter = "abcdef"[i]
            top = block(out, stage, letter, top, width, channels, stride if i == 0 else 1,
                        projection=(i == 0))
    out.append(layer("pool5", "Pooling", [top], ["pool5"],
                     "pooling_param { pool: AVE kernel_size: 7 stride: 1 }"))
    out.append(layer("fc1000", "InnerProduct", ["pool5"], ["fc1000"],
                     "inner_product_param { num_output: 1000 "
                     "weight_filler { type: \"gaussian\" std: 0.01 } }"))
    out.append(layer("prob", "Softmax", ["fc1000"], ["prob"]))
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("out", nargs="?")
    args = parser.parse_args()
    text = resnet50(args.batch)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
