#!/usr/bin/env python3
"""Writes a small Faster R-CNN detector (Ren et al., "Faster R-CNN", 2015) as
a Caffe-style deploy prototxt in py-faster-rcnn's layout: inputs "data" and
"im_info" (height, width, scale); a backbone of four 3x3 convolutions with
ReLU and 2x2 max pooling (stride 16); the region proposal network (a 3x3
convolution, objectness scores for 9 anchors reshaped to two classes and
softmaxed, box deltas) and the proposal layer as py-faster-rcnn declares it,
a Python layer of module rpn.proposal_layer (Crema runs its own Proposal
layer for it, no Python needed); ROIPooling 7x7 at 1/16; two fully connected
layers; class probabilities (21 VOC classes) and per-class box deltas.

  make_faster_rcnn.py [--size S] [OUT]      (default: a 224x224 image)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from netwriter import NetWriter, main, params  # noqa: E402

ANCHORS = 9
CLASSES = 21


def backbone(net, bottom):
    """Four 3x3 convolutions, each with ReLU and 2x2/2 max pooling: the
    features at 1/16 of the image."""
    for index, outputs in enumerate((16, 32, 64, 64), start=1):
        top = net.relu(f"relu{index}", net.conv(f"conv{index}", bottom, outputs, 3))
        bottom = net.pool(f"pool{index}", top, "MAX", kernel=2, stride=2)
    return bottom


def rpn(net, features):
    """The region proposal network and its proposals ("rois")."""
    top = net.relu("rpn_relu/3x3", net.conv("rpn_conv/3x3", features, 64, 3))
    net.conv("rpn_cls_score", top, 2 * ANCHORS, 1)
    net.conv("rpn_bbox_pred", top, 4 * ANCHORS, 1)
    net.layer("rpn_cls_score_reshape", "Reshape", "rpn_cls_score", "rpn_cls_score_reshape",
              "reshape_param { shape { dim: 0 dim: 2 dim: -1 dim: 0 } }")
    net.layer("rpn_cls_prob", "Softmax", "rpn_cls_score_reshape", "rpn_cls_prob")
    net.layer("rpn_cls_prob_reshape", "Reshape", "rpn_cls_prob", "rpn_cls_prob_reshape",
              f"reshape_param {{ shape {{ dim: 0 dim: {2 * ANCHORS} dim: -1 dim: 0 }} }}")
    return net.layer("proposal", "Python", ["rpn_cls_prob_reshape", "rpn_bbox_pred", "im_info"],
                     "rois",
                     params("python_param", module="rpn.proposal_layer", layer="ProposalLayer",
                            param_str="'feat_stride': 16"))


def faster_rcnn(size):
    net = NetWriter("Faster-RCNN-small")
    net.input("data", [1, 3, size, size])
    net.input("im_info", [1, 3])
    features = backbone(net, "data")
    rois = rpn(net, features)
    net.layer("roi_pool5", "ROIPooling", [features, rois], "pool5",
              params("roi_pooling_param", pooled_w=7, pooled_h=7, spatial_scale=0.0625))
    top = "pool5"
    for name in ("fc6", "fc7"):
        net.layer(name, "InnerProduct", top, name,
                  params("inner_product_param", num_output=128,
                         weight_filler={"type": "gaussian", "std": 0.01}))
        top = net.relu(f"relu{name[2:]}", name)
    net.layer("cls_score", "InnerProduct", top, "cls_score",
              params("inner_product_param", num_output=CLASSES,
                     weight_filler={"type": "gaussian", "std": 0.01}))
    net.layer("bbox_pred", "InnerProduct", top, "bbox_pred",
              params("inner_product_param", num_output=4 * CLASSES,
                     weight_filler={"type": "gaussian", "std": 0.001}))
    net.layer("cls_prob", "Softmax", "cls_score", "cls_prob")
    return net.text()


if __name__ == "__main__":
    main(__doc__, faster_rcnn, size=224, min_size=64, batch=False)
