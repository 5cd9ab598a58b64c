#!/usr/bin/env python3
"""SSD detection from Python: models/mobilenet_ssd, with RANDOM weights, on a
picture of coloured shapes, through crema.detection.detect_ssd.

  examples/detect/detect_python.py [--out-dir DIR] [--threshold 0.15] [--seed 1]

The net's weights here are its fillers' random values (--seed), so the boxes and labels mean nothing;
the example shows the plumbing (preparing the image, running the net, reading
DetectionOutput's rows as pixel boxes, drawing them). With trained weights,
give --weights and drop the lowered thresholds.

Writes DIR/shapes.png (examples/detect/make_picture.py's picture) and
DIR/detections.png (the boxes drawn); DIR defaults to a temporary folder
removed at exit. Needs OpenCV's Python module (cv2) for the pictures.
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np

import crema
from crema.proto import crema_pb2
from google.protobuf import text_format

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from make_picture import picture  # noqa: E402

MODEL = os.path.join(REPO, "models/mobilenet_ssd/mobilenet_ssd_deploy.prototxt")
LABELMAP = os.path.join(HERE, "labelmap_voc.prototxt")
# MobileNet-SSD's input: (BGR pixel - 127.5) * 0.007843, i.e. in [-1, 1].
MEAN, SCALE = 127.5, 0.007843


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", help="where to write the pictures (default: a temporary "
                                          "folder, removed at exit)")
    parser.add_argument("--weights", help="trained weights (default: none, random fillers)")
    parser.add_argument("--threshold", type=float, default=0.15,
                        help="lowest score shown (default: %(default)s, low because the weights "
                             "are random)")
    parser.add_argument("--keep", type=int, default=8,
                        help="DetectionOutput's keep_top_k (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random weights")
    parser.add_argument("--verbose", action="store_true", help="show Crema's INFO log")
    return parser.parse_args()


def deploy_net(path, confidence_threshold, keep_top_k):
    """models/mobilenet_ssd's deploy net with the DetectionOutput's
    confidence_threshold and keep_top_k replaced, written to path."""
    net = crema_pb2.NetParameter()
    with open(MODEL) as f:
        text_format.Merge(f.read(), net)
    (output,) = [layer for layer in net.layer if layer.type == "DetectionOutput"]
    output.detection_output_param.confidence_threshold = confidence_threshold
    output.detection_output_param.keep_top_k = keep_top_k
    with open(path, "w") as f:
        f.write(text_format.MessageToString(net))


def draw(image_bgr, detections, names):
    """The picture with each box and "name score" drawn on it."""
    import cv2

    drawn = image_bgr.copy()
    for box, score, label in zip(*detections):
        x0, y0, x1, y1 = (int(round(v)) for v in box)
        cv2.rectangle(drawn, (x0, y0), (x1, y1), (0, 140, 255), 2)
        cv2.putText(drawn, "%s %.2f" % (names[label], score), (x0 + 2, max(y0 - 4, 12)),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    return drawn


def run(out_dir, args):
    import cv2

    picture_path = os.path.join(out_dir, "shapes.png")
    cv2.imwrite(picture_path, picture())
    model = os.path.join(out_dir, "mobilenet_ssd_deploy.prototxt")
    # Random weights score every class near 1/21: the net's own 0.25 would keep
    # almost nothing.
    deploy_net(model, min(args.threshold, 0.25), args.keep)
    crema.set_mode_cpu()
    crema.set_random_seed(args.seed)
    if args.weights:
        net = crema.Net(model, args.weights, crema.TEST)
    else:
        net = crema.Net(model, crema.TEST)
        print("weights: RANDOM (fillers, seed %d), so the boxes mean nothing "
              "(models/ssd_shapes/train_ssd_shapes.sh trains real ones)" % args.seed)
    image = crema.io.load_image(picture_path)  # (H, W, 3) RGB in [0, 1]
    detections = crema.detection.detect_ssd(net, image, threshold=args.threshold, mean=MEAN,
                                            scale=SCALE)
    names = crema.detection.read_labelmap(LABELMAP)
    print("image %s, %dx%d; net input %s; %d detections scoring >= %g"
          % (picture_path, image.shape[1], image.shape[0], net.blobs["data"].data.shape,
             len(detections.scores), args.threshold))
    for box, score, label in zip(*detections):
        print("  %-12s %.4f  box [%s]" % (names[label], score,
                                          ", ".join("%.1f" % v for v in box)))
    drawn_path = os.path.join(out_dir, "detections.png")
    cv2.imwrite(drawn_path, draw(cv2.imread(picture_path), detections, names))
    print("wrote %s" % drawn_path)


def main():
    args = parse_args()
    if args.verbose:
        crema.init_log(0)
    elif "GLOG_minloglevel" not in os.environ:
        crema.init_log(1)
    try:
        import cv2  # noqa: F401
    except ImportError:
        sys.exit("this example draws with OpenCV's Python module (cv2): use Debian's "
                 "/usr/bin/python3, or install python3-opencv")
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        run(args.out_dir, args)
        return
    out_dir = tempfile.mkdtemp(prefix="crema_detect_")
    try:
        run(out_dir, args)
    finally:
        shutil.rmtree(out_dir)


if __name__ == "__main__":
    main()
