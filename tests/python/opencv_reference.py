"""How an output of Crema is compared with OpenCV 4.6's Caffe importer's.

Measure: largest |OpenCV - Crema| over largest |Crema|. DetectionOutput rows
are compared as sets: OpenCV orders them by score and pads with zero rows
(Crema, as SSD's fork, pads an image without detections with -1 rows).
Outputs computed from R-CNN proposals are compared on their first K rows:
OpenCV sizes the rois top before it runs, so it holds post_nms_topn rows,
zeros after the K proposals.
"""
import numpy as np


def relative(got, expected):
    assert got.shape == expected.shape, (got.shape, expected.shape)
    return float(np.abs(got - expected).max() / np.abs(expected).max())


def detections(rows, padding):
    """The (image, label, score, box) rows, sorted by image, label,
    descending score, then box; padding rows left out."""
    rows = rows.reshape(-1, 7)
    rows = rows[~np.all(rows == padding, axis=1)] if padding == 0 else rows[rows[:, 1] != -1]
    keys = [rows[:, i] for i in (6, 5, 4, 3)] + [-rows[:, 2], rows[:, 1], rows[:, 0]]
    return rows[np.lexsort(keys)]


def compare_detections(got, expected):
    got, expected = detections(got, 0), detections(expected, -1)
    assert len(expected) > 0, "no detection kept: the comparison would be empty"
    assert len(got) == len(expected), (len(got), len(expected))
    np.testing.assert_array_equal(got[:, :2], expected[:, :2])
    return relative(got[:, 2:], expected[:, 2:])


def compare(output, got, expected, proposals):
    """Relative difference of one output (`got` OpenCV's, `expected`
    Crema's); proposals: Crema's number of rois, or None."""
    if output == "detection_out":
        return compare_detections(got, expected)
    if proposals is not None:
        got = got.reshape(-1, *expected.shape[1:])
        if output == "rois":
            assert not got[proposals:].any(), "OpenCV's rows after the proposals are not zero"
        got = got[:proposals]
    return relative(got.reshape(expected.shape), expected)
