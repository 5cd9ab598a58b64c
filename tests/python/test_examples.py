"""The Python examples (examples/*.py) run as a user runs them, as scripts in
a subprocess, with short settings on BVLC's files in ../shared/compat: their
output is checked against the compat LMDB's labels and against chance."""
import importlib.util
import os
import re
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import crema
from conftest import SOURCE

EXAMPLES = SOURCE / "examples"
WEIGHTS = "lenet_fashion/lenet_fashion_iter_10000.caffemodel"
LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def run_example(script, *args, cwd=None):
    """Runs examples/<script> with this interpreter; returns its stdout."""
    env = dict(os.environ, GLOG_minloglevel="1")
    run = subprocess.run([sys.executable, str(EXAMPLES / script)] + [str(a) for a in args],
                         capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    assert run.returncode == 0, "%s failed:\n%s\n%s" % (script, run.stdout[-3000:],
                                                         run.stderr[-3000:])
    return run.stdout


def grey_png(pixels):
    """An 8-bit greyscale PNG of a 2-D uint8 array."""
    def chunk(kind, payload):
        return (struct.pack(">I", len(payload)) + kind + payload +
                struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))
    height, width = pixels.shape
    rows = b"".join(b"\x00" + pixels[r].tobytes() for r in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def lmdb_records(tmp_path, lmdb, count):
    """The first `count` raw images (N, 1, 28, 28; 0..255) and labels of an
    LMDB, read by crema's Data layer (no scaling)."""
    path = tmp_path / "read_lmdb.prototxt"
    path.write_text('layer { name: "data" type: "Data" top: "data" top: "label"\n'
                    '  data_param { source: "%s" batch_size: %d backend: LMDB } }\n'
                    % (lmdb, count))
    net = crema.Net(str(path), crema.TEST)
    net.forward()
    return net.blobs["data"].data.copy(), net.blobs["label"].data.astype(int)


@pytest.fixture
def test_pngs(tmp_path, compat):
    """Eight compat test images as PNG files, with their labels."""
    images, labels = lmdb_records(tmp_path, compat / "fashion_test_lmdb", 8)
    paths = []
    for i, image in enumerate(images):
        path = tmp_path / ("test_%d.png" % i)
        path.write_bytes(grey_png(image[0].astype(np.uint8)))
        paths.append(path)
    return paths, labels, images


def load_example(name):
    spec = importlib.util.spec_from_file_location("example_" + name, EXAMPLES / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)   # no examples/__pycache__ in the source tree
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


def test_classification_top1_is_the_lmdb_label(test_pngs, compat):
    paths, labels, _ = test_pngs
    out = run_example("classification.py", "--weights", compat / WEIGHTS, *paths)
    lines = {line.split(": ", 1)[0]: line.split(": ", 1)[1]
             for line in out.splitlines() if line.startswith(str(paths[0].parent))}
    assert len(lines) == len(paths), out
    for path, label in zip(paths, labels):
        ranked = re.findall(r"([^,]+?) \((\d\.\d{4})\)", lines[str(path)])
        assert len(ranked) == 3, lines[str(path)]
        assert ranked[0][0].strip() == LABELS[label], (path, lines[str(path)])
        probabilities = [float(p) for _, p in ranked]
        assert probabilities == sorted(probabilities, reverse=True)


def test_classification_transformer_matches_the_training_input(test_pngs, compat):
    # The Data layer fed LeNet raw 0..255 pixels times 0.00390625; the
    # example's Transformer must give the same input from a PNG file.
    paths, _, images = test_pngs
    example = load_example("classification")
    classifier = example.make_classifier(str(SOURCE / "models/lenet/deploy.prototxt"),
                                         str(compat / WEIGHTS))
    transformer = classifier.transformer
    for path, raw in zip(paths, images):
        got = transformer.preprocess("data", crema.io.load_image(str(path), color=False))
        assert got.shape == (1, 28, 28)
        np.testing.assert_allclose(got, raw * np.float32(0.00390625), rtol=0, atol=1e-6)


def test_classification_list_reports_accuracy(test_pngs, compat, tmp_path):
    paths, labels, _ = test_pngs
    listing = tmp_path / "list.txt"
    listing.write_text("".join("%s %d\n" % (p.name, l) for p, l in zip(paths, labels)))
    out = run_example("classification.py", "--weights", compat / WEIGHTS, "--list", listing)
    assert "accuracy 1.0000 (8 of 8 listed images)" in out, out


def test_classification_list_reproduces_crema_test(compat, tmp_path, crema_tool):
    # caffe.Classifier over 300 test records written as PNG files gives the
    # accuracy `crema test` gives on the same records of the LMDB.
    from conftest import lenet_prototxt
    images, labels = lmdb_records(tmp_path, compat / "fashion_test_lmdb", 300)
    listing = tmp_path / "list.txt"
    with open(listing, "w") as f:
        for i, (image, label) in enumerate(zip(images, labels)):
            (tmp_path / ("%03d.png" % i)).write_bytes(grey_png(image[0].astype(np.uint8)))
            f.write("%03d.png %d\n" % (i, label))
    out = run_example("classification.py", "--weights", compat / WEIGHTS, "--list", listing)
    found = re.search(r"accuracy (\d\.\d{4}) \((\d+) of 300 listed images\)", out)
    assert found, out[-2000:]
    model = tmp_path / "lenet.prototxt"
    model.write_text(lenet_prototxt(compat, test_batch=100))
    tool = subprocess.run([crema_tool, "test", "--model=%s" % model,
                           "--weights=%s" % (compat / WEIGHTS), "--iterations=3"],
                          capture_output=True, text=True, env=dict(os.environ, GLOG_minloglevel="0"))
    assert tool.returncode == 0, tool.stderr[-2000:]
    accuracy = float(re.search(r"\] accuracy = ([0-9.]+)", tool.stderr).group(1))
    assert int(found.group(2)) == round(accuracy * 300)
    assert 0.7 < accuracy < 1  # a trained LeNet, not chance


def source_tree_files():
    """The files where a careless example would write: models/, examples/ and
    data/fashion_mnist/'s top level (not its 70,000 PNGs)."""
    files = {os.path.join(d, f) for part in ("models", "examples")
             for d, _, names in os.walk(SOURCE / part) for f in names}
    data = SOURCE / "data/fashion_mnist"
    return files | set(os.listdir(data) if data.is_dir() else [])


def test_learning_lenet_loss_falls_and_accuracy_rises(compat, tmp_path):
    lmdb = compat / "fashion_test_lmdb"
    before = source_tree_files()
    args = ["--iterations", 60, "--test-interval", 30, "--test-batches", 5, "--seed", 1,
            "--train-lmdb", lmdb, "--test-lmdb", lmdb, "--out-dir", tmp_path / "out"]
    if importlib.util.find_spec("matplotlib"):
        args += ["--plot", tmp_path / "plot.png"]
    out = run_example("learning_lenet.py", *args, cwd=tmp_path)
    rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+(\d\.\d{4})\s+[\d.]+s$", out, re.M)
    assert [int(r[0]) for r in rows] == [0, 30, 60], out
    first, last = map(float, re.search(r"loss: ([\d.]+) over the first 10 iterations, "
                                       r"([\d.]+) over the last 10", out).groups())
    assert last < 0.8 * first, out
    accuracy = float(re.search(r"test accuracy after 60 iterations: ([\d.]+)", out).group(1))
    assert accuracy > 0.4 and accuracy > float(rows[0][2]), out
    assert (tmp_path / "out/lenet_iter_60.caffemodel").is_file()
    if "--plot" in args:
        assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
    assert source_tree_files() == before


def test_learning_lenet_says_what_to_run_without_data(tmp_path):
    env = dict(os.environ, GLOG_minloglevel="1")
    run = subprocess.run([sys.executable, str(EXAMPLES / "learning_lenet.py"),
                          "--train-lmdb", str(tmp_path / "missing")],
                         capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode != 0
    assert "create_fashion_mnist.sh" in run.stderr, run.stderr


def test_net_surgery_fully_convolutional_scores_match(compat, tmp_path):
    out_file = tmp_path / "full_conv.caffemodel"
    out = run_example("net_surgery.py", "--weights", compat / WEIGHTS,
                      "--lmdb", compat / "fashion_test_lmdb", "--out", out_file)
    assert "match: the 4 aligned positions equal the original net's outputs" in out, out
    assert "ip1 weights (500, 800) -> ip1-conv weights (500, 50, 4, 4)" in out, out
    assert out_file.is_file() and (tmp_path / "full_conv.prototxt").is_file()
    # The saved weights hold the cast layers under their new names.
    net = crema.Net(str(tmp_path / "full_conv.prototxt"), str(out_file), crema.TEST)
    assert net.params["ip1-conv"][0].data.shape == (500, 50, 4, 4)
    assert net.blobs["prob"].data.shape == (1, 10, 8, 8)


def test_netspec_lenet_trains_above_chance(compat, tmp_path):
    lmdb = compat / "fashion_test_lmdb"
    out = run_example("netspec_lenet.py", "--iterations", 60, "--test-batches", 5,
                      "--seed", 1, "--train-lmdb", lmdb, "--test-lmdb", lmdb,
                      "--out-dir", tmp_path / "out")
    assert "accuracy  Accuracy         ip2, label -> accuracy" in out, out
    accuracy = float(re.search(r"test accuracy after 60 iterations: ([\d.]+)", out).group(1))
    assert accuracy > 0.4, out   # chance is 0.1
    for name in ("lenet_train.prototxt", "lenet_test.prototxt", "lenet_solver.prototxt",
                 "lenet_iter_60.caffemodel"):
        assert (tmp_path / "out" / name).is_file(), name
    # The generated files are ordinary Caffe prototxt: the test net loads.
    net = crema.Net(str(tmp_path / "out/lenet_test.prototxt"),
                    str(tmp_path / "out/lenet_iter_60.caffemodel"), crema.TEST)
    assert list(net.params) == ["conv1", "conv2", "ip1", "ip2"]


def test_fcn_crop_puts_the_scores_on_the_input_grid():
    # conv1 pad 20, kernel 3 puts input x at x + 19, pool1 at x/2 + 9.25,
    # conv2 at x/2 + 8.25, pool2 at x/4 + 3.875, up_deep (kernel 4, stride
    # 2) back at x/2 + 9.25 (pool1's grid: offset 0), up at x + 20.
    out = run_example("fcn_crop.py", "--size", 37, "--classes", 3)
    assert "deep_cropped Crop axis 2 offset [0]" in out, out
    assert "score        Crop axis 2 offset [20]" in out, out
    assert "map data -> up: axis 1, scale [1.], shift [20.]" in out, out
    assert re.search(r"^score\s+1x3x37x37$", out, re.M), out
    assert out.rstrip().endswith("scores have the input's 37x37"), out
