#!/usr/bin/python3
"""PyTorch twin of `crema time` on a deploy net with force_backward, for
scripts/bench/big_nets_vs_pytorch.sh: one training step's forward and
backward (every parameter gradient and the input's gradient), no solver.

  big_nets_pytorch.py alexnet|resnet50 BATCH THREADS [ITERATIONS] [--device cuda]

prints `pytorch ms: <median> <min> <max>` over ITERATIONS timed steps after
WARMUP untimed ones. With --device cuda the step runs on the GPU (eager,
cuDNN's heuristic algorithm choice, as PyTorch does by default) in plain
float: TF32 off for convolutions and matrix products; as `crema time` does
on a GPU, ITERATIONS steps run back to back between two synchronisations,
three times, and the figures are over those three averages.
  alexnet   BVLC's AlexNet deploy net written out: grouped conv2/4/5, LRN
            across 5 channels (alpha 1e-4, beta 0.75; PyTorch divides alpha by
            the window size as Caffe does), dropout 0.5 active (Crema's TRAIN
            phase), softmax at the end.
  resnet50  torchvision's resnet50 with each stage's stride moved from the 3x3
            to the first 1x1 convolution (branch2a), as in the published
            Caffe model (models/resnet50), batch normalisation on its stored
            statistics (eval mode; use_global_stats: true), softmax at the end.
Needs Debian's python3-torch (1.13) and, for resnet50, python3-torchvision.
"""
import argparse
import statistics
import time

import torch
from torch import nn

WARMUP = 3


def alexnet():
    return nn.Sequential(
        nn.Conv2d(3, 96, 11, stride=4), nn.ReLU(inplace=True),
        nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0),
        nn.MaxPool2d(3, 2),
        nn.Conv2d(96, 256, 5, padding=2, groups=2), nn.ReLU(inplace=True),
        nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0),
        nn.MaxPool2d(3, 2),
        nn.Conv2d(256, 384, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(384, 384, 3, padding=1, groups=2), nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, 3, padding=1, groups=2), nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2), nn.Flatten(),
        nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
        nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
        nn.Linear(4096, 1000), nn.Softmax(dim=1))


def resnet50():
    import torchvision
    net = torchvision.models.resnet50()
    for stage in (net.layer2, net.layer3, net.layer4):
        first = stage[0]
        first.conv1.stride, first.conv2.stride = (2, 2), (1, 1)
    return nn.Sequential(net, nn.Softmax(dim=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("net", choices=["alexnet", "resnet50"])
    parser.add_argument("batch", type=int)
    parser.add_argument("threads", type=int, help="torch.set_num_threads")
    parser.add_argument("iterations", type=int, nargs="?", default=5)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    if args.net == "alexnet":
        net, size = alexnet().train(), 227
    else:
        net, size = resnet50().eval(), 224
    device = torch.device(args.device)
    if args.device == "cuda":
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = False
    net = net.to(device)
    x = torch.randn(args.batch, 3, size, size, device=device, requires_grad=True)

    def synchronize():
        torch.cuda.synchronize()

    def step():
        net.zero_grad(set_to_none=True)
        x.grad = None
        y = net(x)
        y.backward(torch.ones_like(y))

    for _ in range(WARMUP):
        step()
    times = []
    if args.device == "cuda":
        for _ in range(3):
            synchronize()
            start = time.perf_counter()
            for _ in range(args.iterations):
                step()
            synchronize()
            times.append((time.perf_counter() - start) * 1000 / args.iterations)
    for _ in range(args.iterations if args.device == "cpu" else 0):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    print(f"pytorch ms: {statistics.median(times):.1f} {min(times):.1f} {max(times):.1f}")


if __name__ == "__main__":
    main()
