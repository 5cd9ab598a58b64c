#!/usr/bin/python3
"""PyTorch twin of `crema time` on cifar10_quick, for scripts/bench/cifar10_quick_vs_pytorch.sh.

Builds models/cifar10_quick's net (conv32 5x5 pad 2, max-pool 3/2, ReLU,
conv32, ReLU, ave-pool 3/2, conv64, ReLU, ave-pool 3/2, ip64, ip10, softmax
loss; Caffe's pooling rounds its output size up, as ceil_mode does) and prints
one line: `pytorch forward-backward ms: <x>`, the mean over ITERATIONS
forward + backward passes of a batch of 100 zero images, after WARMUP untimed
ones (crema time does the same on zero-filled Input blobs).
  OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 cifar10_quick_pytorch.py 2 [ITERATIONS]
Needs Debian's python3-torch (1.13).
"""
import argparse
import time

import torch
from torch import nn
import torch.nn.functional as F

BATCH = 100
WARMUP = 5


def cifar10_quick():
    return nn.Sequential(
        nn.Conv2d(3, 32, 5, padding=2), nn.MaxPool2d(3, 2, ceil_mode=True), nn.ReLU(inplace=True),
        nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(inplace=True),
        nn.AvgPool2d(3, 2, ceil_mode=True),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(inplace=True),
        nn.AvgPool2d(3, 2, ceil_mode=True),
        nn.Flatten(),
        nn.Linear(64 * 4 * 4, 64), nn.Linear(64, 10))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("threads", type=int, help="torch.set_num_threads")
    parser.add_argument("iterations", type=int, nargs="?", default=50)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    net = cifar10_quick()
    net.train()
    images = torch.zeros(BATCH, 3, 32, 32)
    labels = torch.zeros(BATCH, dtype=torch.int64)

    def step():
        net.zero_grad(set_to_none=False)
        loss = F.cross_entropy(net(images), labels)
        loss.backward()

    for _ in range(WARMUP):
        step()
    start = time.perf_counter()
    for _ in range(args.iterations):
        step()
    elapsed = time.perf_counter() - start
    print(f"pytorch forward-backward ms: {1e3 * elapsed / args.iterations:.3f}")


if __name__ == "__main__":
    main()
