#!/usr/bin/env python3
"""Writes ssd_shapes: a small SSD detector for data/shapes (circles,
squares, triangles; 3 classes and background) with a MobileNet-style
backbone (a 3x3/2 convolution, then depthwise 3x3 and pointwise 1x1 pairs,
each followed by BatchNorm, Scale and ReLU) and SSD heads at strides 8, 16
and 32 (prior sizes 16-22, 32-41 and 56-80 pixels, aspect ratios 1 and 2).

  make_ssd_shapes.py [--size S] [--data DIR] [OUT_DIR]

writes into OUT_DIR (default: this folder)
  ssd_shapes_train.prototxt   AnnotatedData with SSD's sampling and
                              augmentation, MultiBoxLoss
  ssd_shapes_test.prototxt    AnnotatedData (resize only), DetectionOutput,
                              DetectionEvaluate (mAP at IoU 0.5)
  ssd_shapes_deploy.prototxt  an Input of 1 x 3 x S x S, DetectionOutput
                              (confidence 0.25), for crema detect
  ssd_shapes_solver.prototxt  Adam, multistep rate, mAP tested every 500
                              iterations
The LMDBs are DIR/trainval_lmdb and DIR/test_lmdb (default DIR:
data/shapes/out), as models/ssd_shapes/train_ssd_shapes.sh makes them.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, detection_output, multibox_heads, params  # noqa: E402

NUM_CLASSES = 4  # background and three shapes
# (depthwise stride, pointwise outputs) after conv0 (16 channels, stride 2).
BLOCKS = [(1, 32), (2, 64), (1, 64), (2, 128), (1, 128), (2, 128), (2, 128)]
# The heads: (block index whose output they read, min_size, max_size).
SOURCES = [(4, 16, 32), (6, 32, 52), (7, 56, 80)]
MEAN = [104, 117, 123]


def conv_bn_relu(net, name, bottom, outputs, kernel, stride=1, group=1, train=True):
    top = net.conv(name, bottom, outputs, kernel, stride=stride, group=group, bias=False)
    # Batch statistics while training, stored ones when testing (Caffe's rule
    # for a BatchNorm without use_global_stats); the deploy net says so. The
    # stored statistics average about the last 20 batches: Caffe's default
    # (0.999, about 1000 batches) lags behind weights that Adam moves fast,
    # and a test on such statistics scores near zero.
    net.layer(f"{name}/bn", "BatchNorm", top, top,
              "batch_norm_param { moving_average_fraction: 0.95 }" if train
              else "batch_norm_param { use_global_stats: true }" if train is None else "")
    net.layer(f"{name}/scale", "Scale", top, top, "scale_param { bias_term: true }")
    return net.relu(f"{name}/relu", top)


def backbone(net, data, train):
    top = conv_bn_relu(net, "conv0", data, 16, 3, stride=2, train=train)
    channels, sources = 16, {}
    for index, (stride, outputs) in enumerate(BLOCKS, start=1):
        top = conv_bn_relu(net, f"conv{index}/dw", top, channels, 3, stride=stride,
                           group=channels, train=train)
        top = conv_bn_relu(net, f"conv{index}", top, outputs, 1, train=train)
        channels = outputs
        sources[index] = top
    return sources


def heads(net, data, sources):
    """Location and confidence heads and priors on the three sources:
    aspect ratios 1 and 2 (flipped) and sqrt(min * max), four per cell."""
    multibox_heads(net, data, [(sources[index], min_size, max_size, [2], None)
                               for index, min_size, max_size in SOURCES], NUM_CLASSES)


def deploy_end(net, confidence, keep_top_k):
    return detection_output(net, NUM_CLASSES, top_k=200, keep_top_k=keep_top_k,
                            confidence_threshold=confidence)


def annotated_data(net, source, batch, size, train):
    resize = {"resize_mode": "WARP", "height": size, "width": size,
              "interp_mode": ["LINEAR", "AREA", "NEAREST", "CUBIC"] if train else ["LINEAR"]}
    transform = {"mean_value": MEAN, "resize_param": resize}
    body = [params("data_param", source=source, batch_size=batch, backend="LMDB")]
    if train:
        transform.update(
            mirror=True,
            emit_constraint={"emit_type": "CENTER"},
            distort_param={"brightness_prob": 0.5, "brightness_delta": 32,
                           "contrast_prob": 0.5, "contrast_lower": 0.5, "contrast_upper": 1.5,
                           "hue_prob": 0.5, "hue_delta": 18, "saturation_prob": 0.5,
                           "saturation_lower": 0.5, "saturation_upper": 1.5},
            expand_param={"prob": 0.5, "max_expand_ratio": 2.0})
        samplers = ["batch_sampler { max_sample: 1 max_trials: 1 }"]
        for overlap in (0.1, 0.3, 0.5, 0.7, 0.9):
            samplers.append(
                "batch_sampler { sampler { min_scale: 0.3 max_scale: 1.0 min_aspect_ratio: 0.5 "
                "max_aspect_ratio: 2.0 } sample_constraint { min_jaccard_overlap: %s } "
                "max_sample: 1 max_trials: 50 }" % overlap)
        body.append("annotated_data_param { %s }" % " ".join(samplers))
    body.insert(0, params("transform_param", **transform))
    return net.layer("data", "AnnotatedData", None, ["data", "label"], *body)


def train_net(size, data_dir, batch=32):
    net = NetWriter("ssd_shapes_train")
    annotated_data(net, f"{data_dir}/trainval_lmdb", batch, size, train=True)
    heads(net, "data", backbone(net, "data", train=True))
    net.layer("mbox_loss", "MultiBoxLoss", ["mbox_loc", "mbox_conf", "mbox_priorbox", "label"],
              "mbox_loss", "propagate_down: true propagate_down: true propagate_down: false "
              "propagate_down: false",
              params("loss_param", normalization="VALID"),
              params("multibox_loss_param", loc_loss_type="SMOOTH_L1",
                     conf_loss_type="SOFTMAX", loc_weight=1.0, num_classes=NUM_CLASSES,
                     share_location=True, match_type="PER_PREDICTION", overlap_threshold=0.5,
                     use_prior_for_matching=True, background_label_id=0,
                     use_difficult_gt=True, neg_pos_ratio=3.0, neg_overlap=0.5,
                     code_type="CENTER_SIZE", ignore_cross_boundary_bbox=False,
                     mining_type="MAX_NEGATIVE"))
    return net.text()


def test_net(size, data_dir, batch=50):
    net = NetWriter("ssd_shapes_test")
    annotated_data(net, f"{data_dir}/test_lmdb", batch, size, train=False)
    heads(net, "data", backbone(net, "data", train=False))
    deploy_end(net, confidence=0.01, keep_top_k=100)
    net.layer("detection_eval", "DetectionEvaluate", ["detection_out", "label"],
              "detection_eval",
              params("detection_evaluate_param", num_classes=NUM_CLASSES,
                     background_label_id=0, overlap_threshold=0.5,
                     evaluate_difficult_gt=False))
    return net.text()


def deploy_net(size):
    net = NetWriter("ssd_shapes_deploy")
    net.input("data", [1, 3, size, size])
    heads(net, "data", backbone(net, "data", train=None))
    deploy_end(net, confidence=0.25, keep_top_k=50)
    return net.text()


def solver(folder, max_iter):
    return "\n".join([
        f'train_net: "{folder}/ssd_shapes_train.prototxt"',
        f'test_net: "{folder}/ssd_shapes_test.prototxt"',
        "test_iter: 6  # 300 test images in batches of 50",
        f"test_interval: 500",
        "test_initialization: false",
        'type: "Adam"',
        "base_lr: 0.003",
        "momentum: 0.9",
        "momentum2: 0.999",
        "weight_decay: 0.0005",
        'lr_policy: "multistep"',
        "gamma: 0.1",
        f"stepvalue: {int(max_iter * 0.7)}",
        f"stepvalue: {int(max_iter * 0.9)}",
        f"max_iter: {max_iter}",
        "display: 50",
        "average_loss: 50",
        "snapshot: 500",
        f'snapshot_prefix: "{folder}/ssd_shapes"',
        "random_seed: 1701",
        'eval_type: "detection"',
        'ap_version: "11point"',
        "show_per_class_result: true",
        ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=128, help="input size (default 128)")
    parser.add_argument("--data", default="data/shapes/out", help="folder of the LMDBs")
    parser.add_argument("--max-iter", type=int, default=4000, help="training iterations")
    parser.add_argument("out_dir", nargs="?", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    if args.size < 64 or args.size % 32:
        parser.error("--size must be at least 64 and a multiple of 32")
    if args.max_iter < 10:
        parser.error("--max-iter must be at least 10")
    # Paths in the solver: relative to the checkout's root when inside it.
    folder = os.path.relpath(args.out_dir)
    if folder.startswith(".."):
        folder = os.path.abspath(args.out_dir)
    files = {"ssd_shapes_train.prototxt": train_net(args.size, args.data),
             "ssd_shapes_test.prototxt": test_net(args.size, args.data),
             "ssd_shapes_deploy.prototxt": deploy_net(args.size),
             "ssd_shapes_solver.prototxt": solver(folder, args.max_iter)}
    os.makedirs(args.out_dir, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(args.out_dir, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
