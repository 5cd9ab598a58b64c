#!/usr/bin/env python3
"""Writes a small R-FCN detector (Dai et al., "R-FCN", 2016) as a Caffe-style
deploy prototxt in the layout of the R-FCN Caffe release: the backbone and
region proposal network of ../faster_rcnn (proposals by the Python layer
rpn.proposal_layer, which Crema runs natively), then 1x1 convolutions to
position-sensitive score maps, (21 classes) x 3 x 3 for the classes and
(2 x 4) x 3 x 3 for class-agnostic boxes, PSROIPooling of each map into 3x3
bins at 1/16, and 3x3 average pooling to vote; Softmax over the classes.

  make_rfcn.py [--size S] [OUT]      (default: a 224x224 image)
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "faster_rcnn"))
from netwriter import NetWriter, main, params  # noqa: E402
from make_faster_rcnn import CLASSES, backbone, rpn  # noqa: E402

GROUP = 3


def vote(net, name, maps, rois, outputs):
    """PSROIPooling into GROUP x GROUP bins, then their average: [R, outputs, 1, 1]."""
    pooled = net.layer(f"psroipooled_{name}_rois", "PSROIPooling", [maps, rois],
                       f"psroipooled_{name}_rois",
                       params("psroi_pooling_param", spatial_scale=0.0625, output_dim=outputs,
                              group_size=GROUP))
    return net.pool(f"ave_{name}_rois", pooled, "AVE", kernel=GROUP, stride=GROUP)


def rfcn(size):
    net = NetWriter("R-FCN-small")
    net.input("data", [1, 3, size, size])
    net.input("im_info", [1, 3])
    features = backbone(net, "data")
    rois = rpn(net, features)
    cls_maps = net.conv("rfcn_cls", features, CLASSES * GROUP * GROUP, 1)
    bbox_maps = net.conv("rfcn_bbox", features, 8 * GROUP * GROUP, 1)
    scores = vote(net, "cls", cls_maps, rois, CLASSES)
    boxes = vote(net, "loc", bbox_maps, rois, 8)
    net.layer("cls_prob_pre", "Softmax", scores, "cls_prob_pre")
    net.layer("cls_prob", "Reshape", "cls_prob_pre", "cls_prob",
              f"reshape_param {{ shape {{ dim: -1 dim: {CLASSES} }} }}")
    net.layer("bbox_pred", "Reshape", boxes, "bbox_pred",
              "reshape_param { shape { dim: -1 dim: 8 } }")
    return net.text()


if __name__ == "__main__":
    main(__doc__, rfcn, size=224, min_size=64, batch=False)
