#!/usr/bin/python3
"""The side check of models/fashion_resnet's number: the same net and recipe
in PyTorch (Debian's python3-torch and python3-torchvision), trained on the
same Fashion-MNIST files, tested on the 10,000 test images each epoch with
the weights' moving average, as the Crema solver does.

The same: the net (3x3 stem, one residual block per stage at 28/14/7
pixels, widths 32/64/128, convolutions without bias, batch norm whose
statistics average with 0.99, He-normal fan-in initialisation), batch 64,
13 epochs (12,181 iterations), the one-cycle rate (cosine from 0.005 up to
0.1 over the first 15%, cosine down to 0 after), momentum 0.9, decoupled
weight decay 0.0005 scaled by the rate, label smoothing 0.1, the weights'
moving average (decay 0.999), and the augmentations (random resized crop,
scale 0.9-1 and ratio 0.9-1.1, a mirror, random erasing, p 0.2, scale
0.02-0.1) on (x - 73) / 256.

    OMP_NUM_THREADS=2 /usr/bin/python3 fashion_resnet_pytorch.py [--epochs 13] [--metrics OUT.jsonl]
        [--device cuda] [--data DIR]

--device cuda trains on a GPU (the augmentations still run on the host);
--data names the folder of the four .gz files (default: Debian's).

Prints one line per epoch and writes the same metrics lines as crema train
(kind test, outputs accuracy), so plot_training_log.py can draw it.
"""
import argparse
import copy
import gzip
import json
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as T

RAW = "/usr/share/datasets/fashion-mnist"
BATCH, TEST_BATCH = 64, 100
BASE_LR, PCT_START, DIV_FACTOR = 0.1, 0.15, 20
MOMENTUM, DECAY, SMOOTHING, EMA = 0.9, 0.0005, 0.1, 0.999


def read_idx(path, header_ints):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    header = np.frombuffer(raw[:4 * header_ints], dtype=">i4")
    return header, np.frombuffer(raw[4 * header_ints:], dtype=np.uint8)


def load(data, kind):
    (_, n, rows, cols), pixels = read_idx(f"{data}/{kind}-images-idx3-ubyte.gz", 4)
    _, labels = read_idx(f"{data}/{kind}-labels-idx1-ubyte.gz", 2)
    return pixels.reshape(n, 1, rows, cols), labels.astype(np.int64)


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, kernel, stride=1, relu=True):
        layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
                  nn.BatchNorm2d(cout, eps=1e-5, momentum=1 - 0.99)]
        if relu:
            layers.append(nn.ReLU(inplace=True))
        super().__init__(*layers)


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = ConvBN(cin, cout, 3, stride)
        self.b = ConvBN(cout, cout, 3, relu=False)
        self.proj = ConvBN(cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else None

    def forward(self, x):
        shortcut = self.proj(x) if self.proj is not None else x
        return F.relu(self.b(self.a(x)) + shortcut)


class FashionResNet(nn.Module):
    def __init__(self, widths=(32, 64, 128)):
        super().__init__()
        self.stem = ConvBN(1, widths[0], 3)
        blocks, cin = [], widths[0]
        for stage, width in enumerate(widths):
            blocks.append(Block(cin, width, 1 if stage == 0 else 2))
            cin = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, 10)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(x.mean(dim=(2, 3)))


def learning_rate(it, max_iter):
    up = PCT_START * max_iter

    def cosine(a, b, t):
        return b + (a - b) * (1 + math.cos(math.pi * t)) / 2

    if it < up:
        return cosine(BASE_LR / DIV_FACTOR, BASE_LR, it / up)
    return cosine(BASE_LR, 0.0, min(1.0, (it - up) / (max_iter - up)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=13)
    parser.add_argument("--metrics", help="write test lines here (JSON Lines)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--data", default=RAW, help="the folder of the Fashion-MNIST .gz files")
    options = parser.parse_args()
    torch.manual_seed(1)
    np.random.seed(1)
    device = torch.device(options.device)
    train_x, train_y = load(options.data, "train")
    test_x, test_y = load(options.data, "t10k")
    test_input = ((torch.from_numpy(test_x.copy()).float() - 73) / 256).to(device)
    augment = T.Compose([
        T.RandomResizedCrop(28, scale=(0.9, 1.0), ratio=(0.9, 1.1)),
        T.RandomHorizontalFlip(),
        T.RandomErasing(p=0.2, scale=(0.02, 0.1), ratio=(0.3, 3.3), value=0),
    ])
    model = FashionResNet().to(device)
    ema = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=BASE_LR, momentum=MOMENTUM)
    per_epoch = len(train_x) // BATCH
    max_iter = options.epochs * per_epoch
    metrics = open(options.metrics, "w") if options.metrics else None
    start, it = time.time(), 0
    while it < max_iter:
        order = np.random.permutation(len(train_x))
        for first in range(0, len(order) - BATCH + 1, BATCH):
            if it >= max_iter:
                break
            batch = torch.from_numpy(train_x[order[first:first + BATCH]]).float()
            # The image-level augmentations on (x - 73) / 256, the erasing after.
            inputs = torch.stack([augment((image - 73) / 256) for image in batch]).to(device)
            labels = torch.from_numpy(train_y[order[first:first + BATCH]]).to(device)
            lr = learning_rate(it, max_iter)
            for group in optimizer.param_groups:
                group["lr"] = lr
            model.train()
            loss = F.cross_entropy(model(inputs), labels, label_smoothing=SMOOTHING)
            optimizer.zero_grad()
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():  # decoupled decay, from the weights before the step
                    p.mul_(1 - lr * DECAY)
            optimizer.step()
            with torch.no_grad():  # weights and batch-norm statistics, as Crema averages both
                for e, p in zip(ema.parameters(), model.parameters()):
                    e.mul_(EMA).add_(p, alpha=1 - EMA)
                for e, b in zip(ema.buffers(), model.buffers()):
                    if e.dtype.is_floating_point:
                        e.mul_(EMA).add_(b, alpha=1 - EMA)
            it += 1
            if it % per_epoch == 0 or it == max_iter:
                accuracy = test(ema, test_input, test_y)
                print("iteration %d (%.0f s): test accuracy %.4f (moving average)"
                      % (it, time.time() - start, accuracy), flush=True)
                if metrics:
                    metrics.write(json.dumps({"kind": "test", "iter": it, "time": time.time(),
                                              "elapsed": time.time() - start, "net": 0,
                                              "outputs": {"accuracy": accuracy}}) + "\n")
                    metrics.flush()
    print("final test accuracy %.4f after %d iterations, %.0f s" % (accuracy, it,
                                                                     time.time() - start))


def test(ema, inputs, labels):
    """Accuracy of the averaged weights and statistics."""
    with torch.no_grad():
        ema.eval()
        right = 0
        for first in range(0, len(inputs), TEST_BATCH):
            scores = ema(inputs[first:first + TEST_BATCH])
            right += (scores.argmax(1).cpu().numpy() == labels[first:first + TEST_BATCH]).sum()
    return float(right / len(inputs))


if __name__ == "__main__":
    main()
