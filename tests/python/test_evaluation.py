"""crema.evaluate_classifier and `crema test --labels --confusion`: BVLC's
trained LeNet on the compat LMDB's first 300 records scored both ways gives the
same matrix and accuracies, the matrix's rows sum to the records' class
counts, and the tool writes the PNG."""
import os
import re
import subprocess

import numpy as np
import pytest

import crema
from conftest import lenet_prototxt

WEIGHTS = "lenet_fashion/lenet_fashion_iter_10000.caffemodel"
LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
BATCH, ITERATIONS = 30, 10  # the first 300 records
# The tool prints its report at INFO, which the suite's environment may hide.
INFO = dict(os.environ, GLOG_minloglevel="0")


@pytest.fixture
def lenet(tmp_path, compat):
    net = tmp_path / "lenet.prototxt"
    net.write_text(lenet_prototxt(compat, test_batch=BATCH))
    return net, compat / WEIGHTS


def tool_report(crema_tool, net, weights, tmp_path, *flags):
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(LABELS) + "\n")
    run = subprocess.run([crema_tool, "test", "--model=%s" % net, "--weights=%s" % weights,
                          "--iterations=%d" % ITERATIONS, "--labels=%s" % labels] + list(flags),
                         capture_output=True, text=True, env=INFO)
    return run


def parse_matrix(log):
    """The confusion matrix's rows from the tool's log, in class order."""
    rows = []
    for name in LABELS:
        match = re.search(r"\] +%s +((?:\d+ *)+)$" % re.escape(name), log, re.M)
        assert match, "no matrix row for %s" % name
        rows.append([int(v) for v in match.group(1).split()])
    return np.array(rows)


def test_python_and_the_tool_give_the_same_numbers(crema_tool, lenet, tmp_path):
    net_file, weights = lenet
    png = tmp_path / "confusion.png"
    run = tool_report(crema_tool, net_file, weights, tmp_path, "--top_k=3",
                      "--confusion=%s" % png)
    assert run.returncode == 0, run.stderr[-3000:]
    log = run.stderr
    tool_matrix = parse_matrix(log)
    top1 = float(re.search(r"Top-1 accuracy: ([0-9.]+)", log).group(1))
    top3 = float(re.search(r"Top-3 accuracy: ([0-9.]+)", log).group(1))
    mean_accuracy = float(re.search(r"\] accuracy = ([0-9.]+)", log).group(1))

    net = crema.Net(str(net_file), str(weights), crema.TEST)
    result = crema.evaluate_classifier(net, ITERATIONS, top_k=3)
    assert result["samples"] == BATCH * ITERATIONS
    assert np.array_equal(result["confusion"], tool_matrix)
    assert result["accuracy"] == pytest.approx(top1, abs=5e-5)
    assert result["top_k"] == 3 and result["top_k_accuracy"] == pytest.approx(top3, abs=5e-5)
    # The Accuracy layer's own mean over the batches says the same.
    assert result["accuracy"] == pytest.approx(mean_accuracy, abs=1e-5)
    assert result["top_k_accuracy"] >= result["accuracy"]
    per_class = np.diag(tool_matrix) / tool_matrix.sum(axis=1)
    assert np.allclose(result["per_class_accuracy"], per_class)

    # The rows sum to the class counts of the records scored: the same first
    # 300, read again by a new net.
    again = crema.Net(str(net_file), str(weights), crema.TEST)
    labels = []
    for _ in range(ITERATIONS):
        again.forward()
        labels.append(again.blobs["label"].data.copy())
    counts = np.bincount(np.concatenate(labels).astype(int), minlength=10)
    assert np.array_equal(result["confusion"].sum(axis=1), counts)

    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("confusion.png.*"))  # nothing half-written beside it


def test_labels_of_the_wrong_count_and_nets_without_accuracy_are_refused(crema_tool, lenet,
                                                                         tmp_path):
    net_file, weights = lenet
    labels = tmp_path / "three.txt"
    labels.write_text("a\nb\nc\n")
    run = subprocess.run([crema_tool, "test", "--model=%s" % net_file, "--weights=%s" % weights,
                          "--iterations=1", "--labels=%s" % labels],
                         capture_output=True, text=True, env=INFO)
    assert run.returncode != 0
    assert "3 names, but the net's scores have 10 classes" in run.stderr

    without = tmp_path / "no_accuracy.prototxt"
    text = net_file.read_text()
    text = re.sub(r'layer \{\s*name: "accuracy".*?\n\}\n', "", text, flags=re.S)
    assert "Accuracy" not in text
    without.write_text(text)
    net = crema.Net(str(without), str(weights), crema.TEST)
    with pytest.raises(crema.Error, match="no Accuracy layer"):
        crema.evaluate_classifier(net, 1)
