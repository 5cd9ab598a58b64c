#!/usr/bin/env python3
"""Times a deploy net's forward pass in one framework, from Python, or
writes the random weights both frameworks read.

  dnn_forward.py weights BUILD_DIR NET.prototxt OUT.caffemodel
  dnn_forward.py crema   BUILD_DIR NET.prototxt NET.caffemodel ITERATIONS
  dnn_forward.py opencv  BUILD_DIR NET.prototxt NET.caffemodel ITERATIONS

weights: Crema's fillers (the prototxt's), with every BatchNorm's stored
mean 0, variance 1 and factor 1 (a zero factor would divide by zero),
saved as a .caffemodel (Crema's Python module of BUILD_DIR).
crema / opencv: loads the net and weights (crema.Net in TEST phase;
cv2.dnn.readNetFromCaffe on OpenCV's own CPU backend), fills the input with
the same Gaussian noise (seed 0), runs three untimed passes, then
ITERATIONS timed ones; prints "median MS fastest MS" of them. Threads: the caller's
CREMA_NUM_THREADS for Crema; for OpenCV, cv2.setNumThreads(THREADS) from
the environment variable THREADS (default 2).
"""
import os
import sys
import time

import numpy as np


def crema_module(build):
    sys.path.insert(0, os.path.join(build, "python"))
    import crema
    crema.set_mode_cpu()
    return crema


def write_weights(build, prototxt, out):
    crema = crema_module(build)
    net = crema.Net(prototxt, crema.TEST)
    for name, layer in zip(net._layer_names, net.layers):
        if layer.type == "BatchNorm":
            blobs = layer.blobs
            blobs[0].data[...] = 0
            blobs[1].data[...] = 1
            blobs[2].data[...] = 1
    net.save(out)


def input_shape(prototxt):
    """The first Input layer's shape, read from the text."""
    import re
    text = open(prototxt).read()
    match = re.search(r"input_param\s*\{\s*shape\s*\{([^}]*)\}", text)
    return [int(d) for d in re.findall(r"dim:\s*(\d+)", match.group(1))]


def timed(forward, iterations):
    for _ in range(3):
        forward()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        forward()
        times.append(1000 * (time.perf_counter() - start))
    return float(np.median(times)), min(times)


def main():
    what, build, prototxt, weights = sys.argv[1:5]
    if what == "weights":
        return write_weights(build, prototxt, weights)
    iterations = int(sys.argv[5])
    data = np.random.RandomState(0).standard_normal(input_shape(prototxt)).astype(np.float32)
    if what == "crema":
        crema = crema_module(build)
        net = crema.Net(prototxt, crema.TEST, weights=weights)
        net.blobs[net.inputs[0]].data[...] = data
        median, fastest = timed(net.forward, iterations)
    elif what == "opencv":
        import cv2
        cv2.setNumThreads(int(os.environ.get("THREADS", "2")))
        net = cv2.dnn.readNetFromCaffe(prototxt, weights)
        net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
        net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
        net.setInput(data)
        median, fastest = timed(net.forward, iterations)
    else:
        sys.exit(f"dnn_forward.py: unknown framework {what}")
    print(f"median {median:.3f} fastest {fastest:.3f}")


if __name__ == "__main__":
    main()
