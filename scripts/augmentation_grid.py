#!/usr/bin/python3
"""Draws what a net's training augmentations do: the first 16 records of its
TRAIN data layer as stored (left) and as the layer's transform_param turns
them into a batch (right), each 4 x 4, undoing the mean and scale.

    augmentation_grid.py TRAIN_TEST.prototxt OUT.png [--seed N]

Run from the checkout's root (the net names its data relative to it), with
PYTHONPATH at the build's python folder and /usr/bin/python3 (matplotlib).
"""
import argparse
import sys

import numpy as np
from google.protobuf import text_format

import crema
from crema.proto import crema_pb2


def train_data_layer(net):
    for layer in net.layer:
        if layer.type == "Data" and any(rule.phase == crema_pb2.TRAIN for rule in layer.include):
            return layer
    sys.exit("augmentation_grid.py: the net has no Data layer for the TRAIN phase")


def plain_copy(net, layer):
    """A net of the data layer alone, in the TRAIN phase, with its
    transform_param reduced to the scale and mean (no augmentation)."""
    plain = crema_pb2.NetParameter()
    plain.name = net.name + "_plain"
    copy = plain.layer.add()
    copy.CopyFrom(layer)
    transform = crema_pb2.TransformationParameter()
    transform.scale = layer.transform_param.scale
    transform.mean_value.extend(layer.transform_param.mean_value)
    copy.transform_param.CopyFrom(transform)
    return plain


def images(net_param, top, transform):
    """The first 16 items of the data layer's first batch, as bytes again."""
    net = crema.Net(net_param, crema.TRAIN)
    net.forward()
    data = net.blobs[top].data[:16, 0].copy()
    mean = transform.mean_value[0] if transform.mean_value else 0.0
    return np.clip(data / transform.scale + mean, 0, 255)


def grid(items):
    """4 x 4 tiles with a 2-pixel gap."""
    size = items.shape[1]
    out = np.full((4 * size + 6, 4 * size + 6), 255.0)
    for i, item in enumerate(items[:16]):
        r, c = divmod(i, 4)
        out[r * (size + 2):r * (size + 2) + size, c * (size + 2):c * (size + 2) + size] = item
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("net")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import tempfile

    net = crema_pb2.NetParameter()
    with open(options.net) as f:
        text_format.Merge(f.read(), net)
    layer = train_data_layer(net)
    top = layer.top[0]
    augmented_net = plain_copy(net, layer)
    augmented_net.layer[0].transform_param.CopyFrom(layer.transform_param)
    with tempfile.TemporaryDirectory() as scratch:
        paths = {}
        for kind, param in (("plain", plain_copy(net, layer)), ("augmented", augmented_net)):
            path = "%s/%s.prototxt" % (scratch, kind)
            with open(path, "w") as f:
                f.write(text_format.MessageToString(param))
            paths[kind] = path
        crema.set_random_seed(options.seed)
        plain = images(paths["plain"], top, layer.transform_param)
        crema.set_random_seed(options.seed)
        augmented = images(paths["augmented"], top, layer.transform_param)
    figure, axes = plt.subplots(1, 2, figsize=(8, 4.3))
    for ax, items, title in ((axes[0], plain, "as stored"), (axes[1], augmented, "augmented")):
        ax.imshow(grid(items), cmap="gray", vmin=0, vmax=255)
        ax.set_title(title)
        ax.axis("off")
    figure.tight_layout()
    figure.savefig(options.out, dpi=100)
    print("wrote %s" % options.out)

if __name__ == "__main__":
    main()
