#!/usr/bin/env python3
"""Writes models/fashion_resnet: a small residual net for Fashion-MNIST
(28x28 grey, 10 classes) and two ways to train it, for docs/training.md:

  fashion_resnet_train_test.prototxt   the recipe: random resized crop,
                                       mirror, random erasing
  fashion_resnet_solver.prototxt       SGDW, warm-up then one-cycle-style
                                       cosine, label smoothing, EMA, best
                                       checkpoint
  fashion_resnet_plain_train_test.prototxt
  fashion_resnet_plain_solver.prototxt Caffe's plain recipe on the same net:
                                       SGD, step, crop and mirror
  fashion_resnet_deploy.prototxt       the net alone, one image

The net: a 3x3 stem of WIDTHS[0] channels, then one residual block per
stage at 28, 14 and 7 pixels (two 3x3 convolutions, each followed by
BatchNorm and Scale; a strided 1x1 projection where the shape changes),
global average pooling and one inner product. Every convolution is without
bias (the Scale after it has one).

  make_fashion_resnet.py [--epochs E]   (writes into this script's folder)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from netwriter import NetWriter, params  # noqa: E402

WIDTHS = (32, 64, 128)
TRAIN_IMAGES = 60000
TEST_IMAGES = 10000
BATCH = 64
TEST_BATCH = 100
HERE = os.path.dirname(os.path.abspath(__file__))
FOLDER = "models/fashion_resnet"
SCALE = 0.00390625  # 1/256: bytes to [0, 1)
MEAN = 73  # the training images' mean byte, 0.286 * 255
# The BatchNorm statistics average about 100 batches, not Caffe's 1,000: at
# the one-cycle's peak rate the weights move too fast for a longer memory.
BN_AVERAGE = 0.99


def conv_bn(net, name, bottom, channels, kernel, stride=1, relu=True):
    """A convolution without bias, BatchNorm (batch statistics when training,
    stored ones when testing, averaged with BN_AVERAGE), Scale with bias, and
    ReLU if asked."""
    net.layer(name, "Convolution", bottom, name,
              params("convolution_param", num_output=channels, bias_term=False,
                     pad=kernel // 2 or None, kernel_size=kernel,
                     stride=stride if stride != 1 else None, weight_filler={"type": "msra"}))
    net.layer(f"{name}_bn", "BatchNorm", name, name,
              f"batch_norm_param {{ moving_average_fraction: {BN_AVERAGE} }}")
    net.layer(f"{name}_scale", "Scale", name, name, "scale_param { bias_term: true }")
    if relu:
        net.layer(f"{name}_relu", "ReLU", name, name)
    return name


def block(net, name, bottom, in_channels, channels, stride):
    """out = ReLU(conv-bn-relu-conv-bn(x) + shortcut(x))."""
    a = conv_bn(net, f"{name}_a", bottom, channels, 3, stride)
    b = conv_bn(net, f"{name}_b", a, channels, 3, relu=False)
    shortcut = bottom
    if stride != 1 or in_channels != channels:
        shortcut = conv_bn(net, f"{name}_proj", bottom, channels, 1, stride, relu=False)
    net.layer(f"{name}_sum", "Eltwise", [b, shortcut], f"{name}_sum",
              "eltwise_param { operation: SUM }")
    net.layer(f"{name}_relu", "ReLU", f"{name}_sum", f"{name}_sum")
    return f"{name}_sum"


def body(net, data):
    x = conv_bn(net, "stem", data, WIDTHS[0], 3)
    channels = WIDTHS[0]
    for stage, width in enumerate(WIDTHS, 1):
        x = block(net, f"res{stage}", x, channels, width, 1 if stage == 1 else 2)
        channels = width
    net.layer("pool", "Pooling", x, "pool", "pooling_param { pool: AVE global_pooling: true }")
    net.layer("fc", "InnerProduct", "pool", "fc",
              params("inner_product_param", num_output=10, weight_filler={"type": "msra"},
                     bias_filler={"type": "constant", "value": 0}))
    return "fc"


RECIPE_TRANSFORM = {
    "train": params("transform_param", scale=SCALE, mean_value=MEAN, mirror=True,
                    random_resized_crop={"scale_min": 0.9, "scale_max": 1.0,
                                         "ratio_min": 0.9, "ratio_max": 1.1},
                    random_erasing={"prob": 0.2, "scale_min": 0.02, "scale_max": 0.1}),
    "test": params("transform_param", scale=SCALE, mean_value=MEAN),
}
PLAIN_TRANSFORM = {
    "train": params("transform_param", scale=SCALE, mean_value=MEAN, mirror=True, crop_size=26),
    "test": params("transform_param", scale=SCALE, mean_value=MEAN, crop_size=26),
}


def train_test(name, transform, label_smoothing):
    net = NetWriter(name)
    for phase, source, batch in (("TRAIN", "train", BATCH), ("TEST", "test", TEST_BATCH)):
        net.layer("fashion", "Data", None, ["data", "label"], f"include {{ phase: {phase} }}",
                  transform[source],
                  params("data_param", source=f"data/fashion_mnist/fashion_{source}_lmdb",
                         batch_size=batch, backend="LMDB"))
    logits = body(net, "data")
    net.layer("accuracy", "Accuracy", [logits, "label"], "accuracy", "include { phase: TEST }")
    loss_param = (f"loss_param {{ label_smoothing: {label_smoothing} }}"
                  if label_smoothing else "")
    net.layer("loss", "SoftmaxWithLoss", [logits, "label"], "loss", loss_param)
    return net.text()


def deploy():
    net = NetWriter("FashionResNet")
    net.input("data", [1, 1, 28, 28])
    net.layer("prob", "Softmax", body(net, "data"), "prob")
    return net.text()


def solver(net, prefix, lines):
    return "\n".join([f'net: "{FOLDER}/{net}"',
                      f"test_iter: {TEST_IMAGES // TEST_BATCH}"] + lines +
                     ["display: 100", f'snapshot_prefix: "{FOLDER}/{prefix}"',
                      "solver_mode: CPU", ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=13, help="passes over the 60,000 images")
    epochs = parser.parse_args().epochs
    per_epoch = TRAIN_IMAGES // BATCH  # 937: the last 32 images of a pass go to the next
    iters = epochs * per_epoch
    files = {
        "fashion_resnet_train_test.prototxt":
            train_test("FashionResNet", RECIPE_TRANSFORM, 0.1),
        "fashion_resnet_plain_train_test.prototxt":
            train_test("FashionResNet", PLAIN_TRANSFORM, 0),
        "fashion_resnet_deploy.prototxt": deploy(),
        "fashion_resnet_solver.prototxt": solver(
            "fashion_resnet_train_test.prototxt", "fashion_resnet", [
                f"test_interval: {per_epoch}", 'type: "SGDW"', "base_lr: 0.1",
                "momentum: 0.9", "weight_decay: 0.0005", 'lr_policy: "onecycle"',
                "onecycle_pct_start: 0.15", "onecycle_div_factor: 20",
                f"max_iter: {iters}", "ema_decay: 0.999", 'best_output: "accuracy"',
                "best_mode: MAX", f"snapshot: {iters}", "random_seed: 1"]),
        "fashion_resnet_plain_solver.prototxt": solver(
            "fashion_resnet_plain_train_test.prototxt", "fashion_resnet_plain", [
                f"test_interval: {per_epoch}", "base_lr: 0.1", "momentum: 0.9",
                "weight_decay: 0.0005", 'lr_policy: "step"', "gamma: 0.1",
                f"stepsize: {iters * 2 // 3}", f"max_iter: {iters}", f"snapshot: {iters}",
                "random_seed: 1"]),
    }
    for name, text in files.items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
        print(f"wrote {FOLDER}/{name}")


if __name__ == "__main__":
    main()
