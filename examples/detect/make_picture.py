#!/usr/bin/env python3
"""Writes a test picture for the detection examples: coloured circles and
rectangles drawn with OpenCV on a plain background (BGR, 8-bit).

  make_picture.py OUT.png [--width 480] [--height 360]

Needs OpenCV's Python module (Debian's /usr/bin/python3 has cv2).
"""
import argparse

import numpy as np


def picture(width=480, height=360):
    """The picture as an (height, width, 3) uint8 BGR array."""
    import cv2

    image = np.full((height, width, 3), (235, 225, 210), np.uint8)  # a pale blue-grey
    sx, sy = width / 480.0, height / 360.0

    def pt(x, y):
        return (int(round(x * sx)), int(round(y * sy)))

    cv2.rectangle(image, pt(30, 40), pt(170, 150), (40, 40, 200), cv2.FILLED)
    cv2.circle(image, pt(300, 110), int(70 * min(sx, sy)), (40, 160, 40), cv2.FILLED)
    cv2.rectangle(image, pt(250, 220), pt(450, 330), (160, 60, 30), cv2.FILLED)
    cv2.circle(image, pt(110, 270), int(55 * min(sx, sy)), (20, 180, 230), cv2.FILLED)
    cv2.circle(image, pt(420, 60), int(30 * min(sx, sy)), (60, 60, 60), 4)
    return image


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=360)
    args = parser.parse_args()
    import cv2

    if not cv2.imwrite(args.out, picture(args.width, args.height)):
        parser.error("cannot write %s" % args.out)
    print("wrote %s (%dx%d)" % (args.out, args.width, args.height))


if __name__ == "__main__":
    main()
