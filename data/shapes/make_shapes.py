#!/usr/bin/env python3
"""A small detection data set made here: pictures of circles, squares and
triangles at random sizes, positions, colours and overlaps on textured
backgrounds, with Pascal VOC annotations.

  make_shapes.py OUT_DIR [--train N] [--test M] [--size S] [--seed K]

writes
  OUT_DIR/JPEGImages/NNNNNN.jpg    S x S colour pictures (JPEG, quality 95)
  OUT_DIR/Annotations/NNNNNN.xml   VOC XML: one <object> per shape, its class
                                   name and tight <bndbox> (1-based pixels)
  OUT_DIR/trainval.txt, test.txt   "JPEGImages/x.jpg Annotations/x.xml" lines,
                                   the list form convert_annoset reads
  OUT_DIR/labelmap.prototxt        background 0, circle 1, square 2, triangle 3

The same seed writes the same files (OpenCV draws; numpy draws the
numbers). Needs python3-numpy and python3-opencv (scripts/install_deps.sh).
"""
import argparse
import os

import cv2
import numpy as np

CLASSES = ["circle", "square", "triangle"]


def background(rng, size):
    """Low-frequency colour noise, plus stripes or a checker at random."""
    coarse = rng.uniform(0, 255, (4, 4, 3)).astype(np.float32)
    image = cv2.resize(coarse, (size, size), interpolation=cv2.INTER_CUBIC)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    kind = rng.integers(3)
    period = rng.uniform(6, 24)
    if kind == 0:
        angle = rng.uniform(0, np.pi)
        wave = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) * 2 * np.pi / period)
    elif kind == 1:
        wave = np.sign(np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period))
    else:
        wave = rng.normal(0, 1, (size, size)).astype(np.float32)
    image += (wave * rng.uniform(10, 40))[..., None]
    return np.clip(image, 0, 255).astype(np.uint8)


def overlap(a, b):
    """Intersection over union of two (xmin, ymin, xmax, ymax) boxes."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])
    return inter / (area(a) + area(b) - inter)


def covered(box, by):
    """The share of box's area that the box `by` covers."""
    w = min(box[2], by[2]) - max(box[0], by[0])
    h = min(box[3], by[3]) - max(box[1], by[1])
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / ((box[2] - box[0]) * (box[3] - box[1]))


def draw(rng, image, boxes):
    """Draws one shape that overlaps no earlier box by more than 0.4 IoU and
    covers at most half of any earlier box (drawn over it, it would hide an
    annotated shape); returns (class, box) or None when no place was found. A box is
    (xmin, ymin, xmax, ymax) in 0-based pixels, xmax and ymax one past the
    last pixel the shape covers."""
    size = image.shape[0]
    for _ in range(20):
        label = int(rng.integers(len(CLASSES)))
        extent = int(rng.integers(size // 8, size // 2))
        x0 = int(rng.integers(0, size - extent))
        y0 = int(rng.integers(0, size - extent))
        if label == 0:
            radius = extent // 2
            cx, cy = x0 + radius, y0 + radius
            box = (cx - radius, cy - radius, cx + radius + 1, cy + radius + 1)
        elif label == 1:
            box = (x0, y0, x0 + extent + 1, y0 + extent + 1)
        else:
            points = np.array([[x0 + extent // 2, y0], [x0, y0 + extent],
                               [x0 + extent, y0 + extent]], np.int32)
            box = (x0, y0, x0 + extent + 1, y0 + extent + 1)
        if any(overlap(box, other) > 0.4 or covered(other, box) > 0.5 for _, other in boxes):
            continue
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        if label == 0:
            cv2.circle(image, (cx, cy), radius, colour, -1, cv2.LINE_AA)
        elif label == 1:
            cv2.rectangle(image, (x0, y0), (x0 + extent, y0 + extent), colour, -1)
        else:
            cv2.fillPoly(image, [points], colour, cv2.LINE_AA)
        return CLASSES[label], box
    return None


def annotation(name, size, objects):
    lines = ["<annotation>", "  <folder>shapes</folder>",
             "  <filename>%s.jpg</filename>" % name,
             "  <size><width>%d</width><height>%d</height><depth>3</depth></size>"
             % (size, size)]
    for label, (x0, y0, x1, y1) in objects:
        # VOC pixels are 1-based and inclusive: 0-based x0 is x0 + 1, and the
        # last covered pixel, x1 - 1, is x1.
        lines += ["  <object>", "    <name>%s</name>" % label, "    <difficult>0</difficult>",
                  "    <bndbox><xmin>%d</xmin><ymin>%d</ymin><xmax>%d</xmax><ymax>%d</ymax>"
                  "</bndbox>" % (x0 + 1, y0 + 1, min(x1, size), min(y1, size)),
                  "  </object>"]
    return "\n".join(lines + ["</annotation>", ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--test", type=int, default=300)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.train < 1 or args.test < 1 or not 32 <= args.size <= 1024:
        parser.error("--train and --test must be positive, --size within [32, 1024]")
    rng = np.random.default_rng(args.seed)
    for folder in ("JPEGImages", "Annotations"):
        os.makedirs(os.path.join(args.out_dir, folder), exist_ok=True)
    lists = {"trainval": [], "test": []}
    for index in range(args.train + args.test):
        name = "%06d" % index
        image = background(rng, args.size)
        objects = []
        for _ in range(int(rng.integers(1, 5))):
            shape = draw(rng, image, objects)
            if shape:
                objects.append(shape)
        cv2.imwrite(os.path.join(args.out_dir, "JPEGImages", name + ".jpg"), image,
                    [cv2.IMWRITE_JPEG_QUALITY, 95])
        with open(os.path.join(args.out_dir, "Annotations", name + ".xml"), "w") as f:
            f.write(annotation(name, args.size, objects))
        split = "trainval" if index < args.train else "test"
        lists[split].append("JPEGImages/%s.jpg Annotations/%s.xml" % (name, name))
    for split, lines in lists.items():
        with open(os.path.join(args.out_dir, split + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out_dir, "labelmap.prototxt"), "w") as f:
        f.write('item { name: "none_of_the_above" label: 0 display_name: "background" }\n')
        for label, name in enumerate(CLASSES, 1):
            f.write('item { name: "%s" label: %d display_name: "%s" }\n' % (name, label, name))
    print("make_shapes: %d training and %d test pictures in %s"
          % (args.train, args.test, args.out_dir))


if __name__ == "__main__":
    main()
