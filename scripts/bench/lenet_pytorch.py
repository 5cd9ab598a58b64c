#!/usr/bin/python3
"""PyTorch twin of Crema's LeNet training step, for scripts/bench/lenet_vs_pytorch.sh.

Trains models/lenet's LeNet (same layers, init, solver and Fashion-MNIST
training images, batch 64) and prints one line: `pytorch images/s: <x>`,
timed over ITERATIONS iterations after WARMUP untimed ones.
  OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 lenet_pytorch.py 2 [ITERATIONS]
Needs Debian's python3-torch (1.13) and python3-numpy.
"""
import argparse
import gzip
import math
import sys
import time

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

RAW = "/usr/share/datasets/fashion-mnist"
BATCH = 64
WARMUP = 50
# Solver of models/lenet/lenet_solver.prototxt.
BASE_LR, MOMENTUM, WEIGHT_DECAY, GAMMA, POWER = 0.01, 0.9, 0.0005, 0.0001, 0.75


def read_idx(path, header_ints):
    """Payload of a gzipped idx file (big-endian int32 header, then uint8s)."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    header = np.frombuffer(raw, dtype=">i4", count=header_ints)
    return header, np.frombuffer(raw, dtype=np.uint8, offset=4 * header_ints)


def load_training_set():
    """All 60,000 training images as one float tensor, already scaled as the
    Data layer's transform_param { scale: 0.00390625 } does, so that the timed
    loop does no I/O or conversion."""
    (_, n, rows, cols), pixels = read_idx(f"{RAW}/train-images-idx3-ubyte.gz", 4)
    (_, n_labels), labels = read_idx(f"{RAW}/train-labels-idx1-ubyte.gz", 2)
    assert n == n_labels, "image and label counts differ"
    images = torch.from_numpy(pixels.reshape(n, 1, rows, cols).astype(np.float32))
    images.mul_(0.00390625)
    return images.contiguous(), torch.from_numpy(labels.astype(np.int64))


def lenet():
    net = nn.Sequential(
        nn.Conv2d(1, 20, 5, stride=1), nn.MaxPool2d(2, 2),
        nn.Conv2d(20, 50, 5, stride=1), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(50 * 4 * 4, 500), nn.ReLU(inplace=True),
        nn.Linear(500, 10))
    # Caffe's "xavier" filler (variance_norm FAN_IN by default): uniform in
    # +-sqrt(3 / fan_in), fan_in = inputs per output (channels * kh * kw for
    # a convolution); biases use the "constant" filler, 0.
    for layer in net:
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            fan_in = layer.weight[0].numel()
            bound = math.sqrt(3.0 / fan_in)
            with torch.no_grad():
                layer.weight.uniform_(-bound, bound)
                layer.bias.zero_()
    return net


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("threads", type=int, help="torch.set_num_threads")
    parser.add_argument("iterations", type=int, nargs="?", default=1000)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    images, labels = load_training_set()
    net = lenet()
    net.train()
    weights = [p for name, p in net.named_parameters() if name.endswith("weight")]
    biases = [p for name, p in net.named_parameters() if name.endswith("bias")]
    # Biases have lr_mult 2 in the prototxt; both keep decay_mult 1, so the
    # weight decay applies to them too.
    lr_mults = [1.0, 2.0]
    optimizer = torch.optim.SGD(
        [{"params": weights}, {"params": biases}],
        lr=BASE_LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)

    cursor = 0
    count = images.shape[0]

    def step(it):
        nonlocal cursor
        # Batches in file order, wrapping at the end as Caffe's Data layer does.
        if cursor + BATCH <= count:
            x, y = images[cursor:cursor + BATCH], labels[cursor:cursor + BATCH]
        else:
            rest = cursor + BATCH - count
            x = torch.cat((images[cursor:], images[:rest]))
            y = torch.cat((labels[cursor:], labels[:rest]))
        cursor = (cursor + BATCH) % count
        # The "inv" policy, recomputed every iteration as Caffe's solver does.
        rate = BASE_LR * (1.0 + GAMMA * it) ** (-POWER)
        for group, mult in zip(optimizer.param_groups, lr_mults):
            group["lr"] = rate * mult
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)  # SoftmaxWithLoss: mean over the batch
        loss.backward()
        optimizer.step()
        return loss

    for it in range(WARMUP):
        step(it)
    start = time.perf_counter()
    for it in range(WARMUP, WARMUP + args.iterations):
        loss = step(it)
    seconds = time.perf_counter() - start
    # Eager CPU execution is synchronous: the last step has finished here.
    print(f"lenet_pytorch: torch {torch.__version__}, {args.threads} thread(s), "
          f"{args.iterations} iterations in {seconds:.2f}s, last loss {loss.item():.4f}",
          file=sys.stderr)
    print(f"pytorch images/s: {args.iterations * BATCH / seconds:.1f}")


if __name__ == "__main__":
    main()
