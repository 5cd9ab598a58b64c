#!/usr/bin/env python3
"""Writes Fashion-MNIST as folders of PNG images with Caffe image lists.

  data/fashion_mnist/make_png_folders.py [OUT] [--raw DIR]

OUT (default data/fashion_mnist/png) receives train/<class>/<index>.png
(60,000 images), test/<class>/<index>.png (10,000), and the lists train.txt
and test.txt, one "train/3/00012.png 3" line per image in the data set's
order: what convert_imageset and the ImageData layer read. The images are
28x28 8-bit grey PNGs holding the idx files' bytes unchanged. The raw files
come from the Debian package dataset-fashion-mnist. Idempotent: an OUT that
holds both lists is kept; a new one is written beside it and renamed into
place only when complete. Python's standard library only.
"""
import argparse
import gzip
import os
import shutil
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SPLITS = (("train", "train"), ("t10k", "test"))  # idx file prefix, folder name


def read_idx(path, magic):
    """The dimensions and bytes of an idx file (gzipped or not)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    found, = struct.unpack(">I", data[:4])
    if found != magic:
        sys.exit(f"make_png_folders: {path}: not an idx file (magic {found}, expected {magic})")
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    body = data[4 + 4 * ndim:]
    expected = 1
    for d in dims:
        expected *= d
    if len(body) != expected:
        sys.exit(f"make_png_folders: {path}: {len(body)} bytes of data, expected {expected}")
    return dims, body


def png_chunk(kind, payload):
    return (struct.pack(">I", len(payload)) + kind + payload +
            struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))


def grey_png(pixels, height, width):
    """An 8-bit greyscale PNG of height rows of width bytes."""
    rows = b"".join(b"\x00" + pixels[r * width:(r + 1) * width] for r in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) +
            png_chunk(b"IDAT", zlib.compress(rows, 9)) + png_chunk(b"IEND", b""))


def write_split(raw, prefix, name, out):
    (count, height, width), images = read_idx(
        os.path.join(raw, f"{prefix}-images-idx3-ubyte.gz"), 2051)
    (label_count,), labels = read_idx(os.path.join(raw, f"{prefix}-labels-idx1-ubyte.gz"), 2049)
    if count != label_count:
        sys.exit(f"make_png_folders: {prefix}: {count} images but {label_count} labels")
    for label in sorted(set(labels)):
        os.makedirs(os.path.join(out, name, str(label)))
    size = height * width
    lines = []
    for index in range(count):
        label = labels[index]
        relative = f"{name}/{label}/{index:05d}.png"
        with open(os.path.join(out, relative), "wb") as f:
            f.write(grey_png(images[index * size:(index + 1) * size], height, width))
        lines.append(f"{relative} {label}\n")
    with open(os.path.join(out, f"{name}.txt"), "w") as f:
        f.writelines(lines)
    print(f"make_png_folders: {count} {name} images")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default=os.path.join(HERE, "png"))
    parser.add_argument("--raw", default="/usr/share/datasets/fashion-mnist",
                        help="the folder of the idx files (default: Debian's)")
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    if all(os.path.isfile(os.path.join(out, f"{name}.txt")) for _, name in SPLITS):
        print(f"make_png_folders: {out} exists")
        return
    if not os.path.isfile(os.path.join(args.raw, "train-images-idx3-ubyte.gz")):
        sys.exit(f"make_png_folders: {args.raw} is missing the idx files "
                 "(apt-get install dataset-fashion-mnist)")
    if os.path.exists(out):
        sys.exit(f"make_png_folders: {out} exists but lacks train.txt or test.txt; "
                 "remove it to write it again")
    partial = f"{out}.partial-{os.getpid()}"
    try:
        for prefix, name in SPLITS:
            write_split(args.raw, prefix, name, partial)
        os.rename(partial, out)  # only a complete set takes the final name
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    print(f"make_png_folders: wrote {out}")


if __name__ == "__main__":
    main()
