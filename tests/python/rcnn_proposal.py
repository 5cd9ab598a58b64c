"""py-faster-rcnn's region proposals in numpy, for OpenCV 4.6's Caffe
importer, which cannot build the `Python` layer (module rpn.proposal_layer,
class ProposalLayer) that the published R-CNN deploy files use.

The formulas are py-faster-rcnn's TEST configuration: anchors from a 16-pixel
base box (ratios 0.5, 1, 2; scales 8, 16, 32), deltas applied as its
bbox_transform_inv, boxes clipped to the image, those with a side under
min_size * im_scale dropped, the 6000 best scores kept, greedy NMS at 0.7
(areas and overlaps counting both ends, +1), the 300 best kept.

register_with_opencv(cv2) makes OpenCV build this class for every `Python`
layer; OpenCV sizes a layer's tops before it runs, so the rois top has
POST_NMS_TOP_N rows, the K proposals first and zero rows after them (as
OpenCV's own Proposal layer pads).
"""
import ast

import numpy as np

PRE_NMS_TOP_N = 6000
POST_NMS_TOP_N = 300
NMS_THRESH = 0.7
MIN_SIZE = 16


def _centres(box):
    width, height = box[2] - box[0] + 1, box[3] - box[1] + 1
    return width, height, box[0] + 0.5 * (width - 1), box[1] + 0.5 * (height - 1)


def _boxes(widths, heights, x_centre, y_centre):
    widths, heights = widths[:, None], heights[:, None]
    return np.hstack((x_centre - 0.5 * (widths - 1), y_centre - 0.5 * (heights - 1),
                      x_centre + 0.5 * (widths - 1), y_centre + 0.5 * (heights - 1)))


def anchors(base_size=16, ratios=(0.5, 1, 2), scales=(8, 16, 32)):
    """The A anchors about [0, 0, base_size - 1, base_size - 1]: for each ratio
    a box of the base area (sides rounded half to even, as numpy rounds),
    then that box scaled about its centre by each scale."""
    width, height, x, y = _centres(np.array([0, 0, base_size - 1, base_size - 1], float))
    ratios = np.asarray(ratios, float)
    widths = np.round(np.sqrt(width * height / ratios))
    by_ratio = _boxes(widths, np.round(widths * ratios), x, y)
    scales = np.asarray(scales, float)
    rows = []
    for box in by_ratio:
        width, height, x, y = _centres(box)
        rows.append(_boxes(width * scales, height * scales, x, y))
    return np.vstack(rows)


def apply_deltas(boxes, deltas):
    widths = boxes[:, 2] - boxes[:, 0] + 1.0
    heights = boxes[:, 3] - boxes[:, 1] + 1.0
    x = boxes[:, 0] + 0.5 * widths
    y = boxes[:, 1] + 0.5 * heights
    new_x = deltas[:, 0] * widths + x
    new_y = deltas[:, 1] * heights + y
    new_w = np.exp(deltas[:, 2]) * widths
    new_h = np.exp(deltas[:, 3]) * heights
    return np.stack([new_x - 0.5 * new_w, new_y - 0.5 * new_h,
                     new_x + 0.5 * new_w, new_y + 0.5 * new_h], axis=1)


def nms(boxes, scores, threshold):
    """Indices kept by greedy NMS, best score first."""
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = np.argsort(-scores, kind="stable")
    keep = []
    while order.size:
        i, rest = order[0], order[1:]
        keep.append(i)
        w = np.maximum(0.0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]) + 1)
        h = np.maximum(0.0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]) + 1)
        inter = w * h
        overlap = inter / (areas[i] + areas[rest] - inter)
        order = rest[overlap <= threshold]
    return np.array(keep, dtype=int)


def proposals(scores, deltas, im_info, feat_stride):
    """rois [K, 5] (0, x1, y1, x2, y2) from scores [1, 2A, H, W], deltas
    [1, 4A, H, W] and im_info (height, width, scale)."""
    base = anchors()
    count = base.shape[0]
    height, width = scores.shape[-2:]
    shift_x, shift_y = np.meshgrid(np.arange(width) * feat_stride, np.arange(height) * feat_stride)
    shifts = np.stack([shift_x.ravel(), shift_y.ravel()] * 2, axis=1)
    every = (base[None, :, :] + shifts[:, None, :]).reshape(-1, 4)
    foreground = scores[:, count:].transpose(0, 2, 3, 1).reshape(-1)
    moves = deltas.transpose(0, 2, 3, 1).reshape(-1, 4)
    boxes = apply_deltas(every, moves.astype(float))
    im_height, im_width, im_scale = (float(v) for v in np.ravel(im_info)[:3])
    boxes[:, 0::2] = np.clip(boxes[:, 0::2], 0, im_width - 1)
    boxes[:, 1::2] = np.clip(boxes[:, 1::2], 0, im_height - 1)
    side = MIN_SIZE * im_scale
    kept = ((boxes[:, 2] - boxes[:, 0] + 1 >= side) & (boxes[:, 3] - boxes[:, 1] + 1 >= side))
    boxes, foreground = boxes[kept], foreground[kept]
    order = np.argsort(-foreground, kind="stable")[:PRE_NMS_TOP_N]
    boxes, foreground = boxes[order], foreground[order]
    keep = nms(boxes, foreground, NMS_THRESH)[:POST_NMS_TOP_N]
    rois = np.zeros((len(keep), 5), np.float32)
    rois[:, 1:] = boxes[keep]
    return rois


def feat_stride_of(param_str):
    """py-faster-rcnn's param_str is a Python dict's entries ("'feat_stride': 16")."""
    return int(ast.literal_eval("{%s}" % param_str.strip().strip("{}"))["feat_stride"])


class OpenCVProposalLayer:
    """The Python rpn.proposal_layer as an OpenCV custom layer."""

    def __init__(self, params, blobs):
        self.feat_stride = feat_stride_of(params.get("param_str", "'feat_stride': 16"))

    def getMemoryShapes(self, inputs):
        return [[POST_NMS_TOP_N, 5]]

    def forward(self, inputs):
        rois = proposals(inputs[0], inputs[1], inputs[2], self.feat_stride)
        padded = np.zeros((POST_NMS_TOP_N, 5), np.float32)
        padded[:len(rois)] = rois
        return [padded]


_REGISTERED = []


def register_with_opencv(cv2):
    """Once per process: OpenCV aborts on a second registration of a type."""
    if not _REGISTERED:
        cv2.dnn_registerLayer("Python", OpenCVProposalLayer)
        _REGISTERED.append(True)
