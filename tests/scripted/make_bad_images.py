#!/usr/bin/env python3
"""Images that are small on disk and bad to decode, written from their
formats' structure (no image library needed):

  make_bad_images.py OUT_DIR
      small.jpg          64 x 64 grey baseline JPEG, every pixel 128 (good)
      small.png          8 x 8 grey PNG (good)
      header_bomb.jpg    the same JPEG but its frame header says 30000 x 30000
                         (a few hundred bytes that a decoder that trusts the
                         header turns into 0.9 GB of pixels, 2.7 GB in colour)
      header_bomb.png    a PNG whose IHDR says 30000 x 30000
      truncated.jpg      small.jpg cut inside its image data (no end marker)
      truncated.png      small.png cut before its IEND chunk
  make_bad_images.py --patch-lmdb DATA_MDB
      rewrites, in place, the frame header of every 64 x 64 grey JPEG stored
      in an LMDB file (as convert_imageset --encoded stores small.jpg) to say
      30000 x 30000: the header bomb as a database record.
"""
import os
import struct
import sys
import zlib

BOMB = 30000


def segment(code, payload):
    return bytes([0xFF, code]) + struct.pack(">H", len(payload) + 2) + payload


def frame_header(height, width):
    # SOF0: 8-bit samples, one component (id 1, 1x1 sampling, table 0).
    return segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + bytes([1, 0x11, 0]))


def grey_jpeg(height, width, end=True):
    """A baseline JPEG whose every 8x8 block is flat grey: quantisation all
    ones; DC and AC Huffman tables of one 1-bit code each (symbol 0: no DC
    change; end of block), so each block is two 0 bits."""
    blocks = ((height + 7) // 8) * ((width + 7) // 8)
    scan = bytes((2 * min(blocks, 256) + 7) // 8)
    huffman = bytes([1] + [0] * 15 + [0])
    data = (b"\xFF\xD8" + segment(0xDB, bytes([0]) + bytes([1] * 64)) +
            frame_header(height, width) + segment(0xC4, bytes([0x00]) + huffman) +
            segment(0xC4, bytes([0x10]) + huffman) +
            segment(0xDA, bytes([1, 1, 0x00, 0, 63, 0])) + scan)
    return data + (b"\xFF\xD9" if end else b"")


def chunk(kind, payload):
    return (struct.pack(">I", len(payload)) + kind + payload +
            struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))


def grey_png(height, width, rows):
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = b"".join(b"\x00" + bytes([128]) * width for _ in range(rows))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
            chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))


def write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def patch_lmdb(path):
    with open(path, "rb") as f:
        data = f.read()
    small, bomb = frame_header(64, 64), frame_header(BOMB, BOMB)
    count = data.count(small)
    if count == 0:
        sys.exit(f"{path}: holds no 64 x 64 JPEG frame header to patch")
    with open(path, "wb") as f:
        f.write(data.replace(small, bomb))
    print(f"{path}: {count} record(s) now claim {BOMB} x {BOMB} pixels")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--patch-lmdb":
        patch_lmdb(sys.argv[2])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    small_jpeg = grey_jpeg(64, 64)
    write(folder, "small.jpg", small_jpeg)
    write(folder, "header_bomb.jpg", grey_jpeg(BOMB, BOMB))
    write(folder, "truncated.jpg", small_jpeg[:len(small_jpeg) - 10])
    small_png = grey_png(8, 8, 8)
    write(folder, "small.png", small_png)
    write(folder, "header_bomb.png", grey_png(BOMB, BOMB, 4))
    write(folder, "truncated.png", small_png[:len(small_png) - 14])


if __name__ == "__main__":
    main()
