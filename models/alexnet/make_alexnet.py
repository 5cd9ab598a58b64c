#!/usr/bin/env python3
"""Writes AlexNet as a Caffe-style deploy prototxt: the architecture of
Krizhevsky, Sutskever and Hinton, "ImageNet Classification with Deep
Convolutional Neural Networks" (2012), in the single-tower layout of its
Caffe release: 227x227 input; conv1 96 11x11/4, ReLU, LRN (5 channels, alpha
1e-4, beta 0.75), max pool 3x3/2; conv2 256 5x5 pad 2 in 2 groups, ReLU, LRN,
pool; conv3 384 3x3 pad 1; conv4 384 3x3 pad 1 in 2 groups; conv5 256 3x3
pad 1 in 2 groups, each with ReLU, then pool; fc6 and fc7 4096 with ReLU and
dropout 0.5; fc8 1000; softmax. Without trained weights (for timing), the
weights are drawn from a Gaussian (std 0.01) and the biases are 0.1.

  make_alexnet.py [--batch N] [OUT]      (default: batch 10, standard output)
"""
import argparse
import sys


def layer(name, kind, bottom, top, body=""):
    lines = ["layer {", f'  name: "{name}"', f'  type: "{kind}"']
    if bottom:
        lines.append(f'  bottom: "{bottom}"')
    lines.append(f'  top: "{top}"')
    if body:
        lines.append("  " + body)
    lines.append("}")
    return "\n".join(lines)


def net(batch):
    out = ['name: "AlexNet"',
           layer("data", "Input", None, "data",
                 f"input_param {{ shape: {{ dim: {batch} dim: 3 dim: 227 dim: 227 }} }}")]
    lrn = "lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 }"
    pool = "pooling_param { pool: MAX kernel_size: 3 stride: 2 }"
    bottom = "data"
    convs = [  # name, outputs, kernel, stride, pad, group, then
        ("conv1", 96, 11, 4, 0, 1, "norm_pool"),
        ("conv2", 256, 5, 1, 2, 2, "norm_pool"),
        ("conv3", 384, 3, 1, 1, 1, ""),
        ("conv4", 384, 3, 1, 1, 2, ""),
        ("conv5", 256, 3, 1, 1, 2, "pool"),
    ]
    fillers = ('weight_filler { type: "gaussian" std: 0.01 } '
               'bias_filler { type: "constant" value: 0.1 }')
    for name, outputs, kernel, stride, pad, group, then in convs:
        fields = f"num_output: {outputs} kernel_size: {kernel}"
        fields += f" pad: {pad}" if pad else ""
        fields += f" stride: {stride}" if stride != 1 else ""
        fields += f" group: {group}" if group != 1 else ""
        out.append(layer(name, "Convolution", bottom, name, f"convolution_param {{ {fields} {fillers} }}"))
        index = name[-1]
        out.append(layer(f"relu{index}", "ReLU", name, name))
        bottom = name
        if then == "norm_pool":
            out.append(layer(f"norm{index}", "LRN", bottom, f"norm{index}", lrn))
            bottom = f"norm{index}"
        if then:
            out.append(layer(f"pool{index}", "Pooling", bottom, f"pool{index}", pool))
            bottom = f"pool{index}"
    for name, outputs in (("fc6", 4096), ("fc7", 4096), ("fc8", 1000)):
        out.append(layer(name, "InnerProduct", bottom, name,
                         f"inner_product_param {{ num_output: {outputs} {fillers} }}"))
        bottom = name
        if name != "fc8":
            index = name[-1]
            out.append(layer(f"relu{index}", "ReLU", name, name))
            out.append(layer(f"drop{index}", "Dropout", name, name,
                             "dropout_param { dropout_ratio: 0.5 }"))
    out.append(layer("prob", "Softmax", bottom, "prob"))
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=10, help="images per pass (default 10)")
    parser.add_argument("out", nargs="?", help="file to write (default: standard output)")
    args = parser.parse_args()
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    text = net(args.batch)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
