#!/usr/bin/env python3
"""Classify image files with a trained LeNet through caffe.Classifier: a
deploy net, its weights, and the Transformer settings that prepare each image
as the training data layer did.

  examples/classification.py IMAGE [IMAGE ...]
  examples/classification.py --list data/fashion_mnist/png/test.txt --limit 20

Prints the top-3 Fashion-MNIST labels and probabilities of each image. The
defaults are models/lenet/deploy.prototxt and the weights the main job
(scripts/quickstart.sh) trains, models/lenet/lenet_fashion_iter_10000.caffemodel;
PNG test images come from data/fashion_mnist/make_png_folders.py.
"""
import argparse
import os
import sys
import time

import numpy as np

import crema as caffe

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# What scripts/quickstart.sh (the main job) trains.
WEIGHTS = os.path.join(REPO, "models/lenet/lenet_fashion_iter_10000.caffemodel")

LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

# LeNet's Data layers scale the raw 0..255 pixels by 0.00390625 (1/256,
# transform_param in models/lenet/lenet_train_test.prototxt): a classified
# image must reach the net on the same scale.
TRAINING_SCALE = 0.00390625


def shown(path):
    """A path as short as it gets: relative to the working folder or absolute."""
    return min(os.path.abspath(path), os.path.relpath(path), key=len)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("images", nargs="*", help="image files (any size: resized to the input)")
    parser.add_argument("--model", default=os.path.join(REPO, "models/lenet/deploy.prototxt"),
                        help="deploy prototxt (default: %(default)s)")
    parser.add_argument("--weights",
                        default=WEIGHTS,
                        help="trained .caffemodel (default: the main job's, %(default)s)")
    parser.add_argument("--scale", type=float, default=TRAINING_SCALE,
                        help="factor applied to 0..255 pixels, the training transform_param "
                             "scale (default: %(default)s)")
    parser.add_argument("--top", type=int, default=3, help="labels shown per image (default: 3)")
    parser.add_argument("--list", help="an image list ('path label' lines, as make_png_folders.py "
                                       "writes): classify its images and report the accuracy")
    parser.add_argument("--root", help="folder the --list paths are relative to "
                                       "(default: the list's folder)")
    parser.add_argument("--limit", type=int, default=0, help="classify only the first N of --list")
    parser.add_argument("--batch", type=int, default=100, help="images per forward pass")
    parser.add_argument("--oversample", action="store_true",
                        help="average over 10 crops (corners, centre, mirrors) of each image "
                             "resized to the input; LeNet's 28x28 input leaves only mirrors")
    parser.add_argument("--verbose", action="store_true", help="show Crema's INFO log")
    return parser.parse_args()


def read_list(path, root, limit):
    """The (image path, label) pairs of a Caffe image list."""
    root = root or os.path.dirname(path)
    pairs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                name, label = line.rsplit(None, 1)
                pairs.append((os.path.join(root, name), int(label)))
                if limit and len(pairs) == limit:
                    break
    return pairs


def make_classifier(model, weights, scale=TRAINING_SCALE):
    """A caffe.Classifier whose Transformer turns load_image's (H, W, C) 0..1
    floats into the net's (C, H, W) input: back to 0..255 (raw scale), then
    times the training scale."""
    return caffe.Classifier(model, weights,
                            raw_scale=255,        # 0..1 -> 0..255, the LMDB's pixels
                            input_scale=scale)    # as transform_param { scale } did


def classify(classifier, paths, oversample=False):
    """The net's probabilities (N, classes) for the image files."""
    color = classifier.blobs["data"].channels == 3
    images = [caffe.io.load_image(p, color=color) for p in paths]
    return classifier.predict(images, oversample=oversample)


def describe(probabilities, top):
    order = np.argsort(-probabilities)[:top]
    return ", ".join("%s (%.4f)" % (LABELS[i] if i < len(LABELS) else str(i), probabilities[i])
                     for i in order)


def main():
    args = parse_args()
    if args.verbose:
        caffe.init_log(0)
    elif "GLOG_minloglevel" not in os.environ:
        caffe.init_log(1)
    if not args.images and not args.list:
        sys.exit("classification.py: give image files or --list FILE; Fashion-MNIST PNGs come "
                 "from data/fashion_mnist/make_png_folders.py (data/fashion_mnist/png/test/...)")
    for path, what in ((args.model, "--model"), (args.weights, "--weights")):
        if not os.path.isfile(path):
            sys.exit("classification.py: %s %s does not exist" % (what, path))

    caffe.set_mode_cpu()
    classifier = make_classifier(args.model, args.weights, args.scale)
    classifier.blobs["data"].reshape(args.batch, *classifier.blobs["data"].data.shape[1:])
    classifier.reshape()
    shape = classifier.blobs["data"].data.shape
    print("model   %s\nweights %s" % (shown(args.model), shown(args.weights)))
    print("input   %dx%dx%d, pixels 0..255 x %g (raw scale 255, input scale %g)\n"
          % (shape[1], shape[2], shape[3], args.scale, args.scale))

    items = read_list(args.list, args.root, args.limit) if args.list else []
    items += [(p, None) for p in args.images]
    correct = labelled = 0
    start = time.time()
    for first in range(0, len(items), args.batch):
        chunk = items[first:first + args.batch]
        probabilities = classify(classifier, [p for p, _ in chunk], args.oversample)
        for (path, label), probs in zip(chunk, probabilities):
            mark = ""
            if label is not None:
                labelled += 1
                correct += int(probs.argmax() == label)
                mark = "  [%s: %s]" % ("right" if probs.argmax() == label else "WRONG",
                                       LABELS[label])
            print("%s: %s%s" % (path, describe(probs, args.top), mark))
    seconds = time.time() - start
    print("\n%d images in %.2f s" % (len(items), seconds))
    if labelled:
        print("accuracy %.4f (%d of %d listed images)" % (correct / labelled, correct, labelled))


if __name__ == "__main__":
    main()
