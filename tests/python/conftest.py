"""Shared fixtures of the Python suite: the crema tool, BVLC's files in
../shared/compat, and small LeNet nets and solvers over the compat LMDB.

Run by CTest (PythonTests) with PYTHONPATH=<build>/python and CREMA_TOOL,
CREMA_SHARED, CREMA_SOURCE set; by hand:
  PYTHONPATH=build/cpu/python /usr/bin/python3 -m pytest tests/python
"""
import os
import pathlib

import pytest

SOURCE = pathlib.Path(os.environ.get("CREMA_SOURCE", pathlib.Path(__file__).parents[2]))
SHARED = pathlib.Path(os.environ.get("CREMA_SHARED", SOURCE.parent / "shared"))
COMPAT = pathlib.Path(os.environ.get("CREMA_COMPAT_DIR") or SHARED / "compat")


@pytest.fixture(scope="session")
def crema_tool():
    """The crema command-line tool of the build under test."""
    tool = os.environ.get("CREMA_TOOL", str(SOURCE / "build/cpu/bin/crema"))
    if not os.access(tool, os.X_OK):
        pytest.skip("no crema tool at %s (set CREMA_TOOL)" % tool)
    return tool


@pytest.fixture(scope="session")
def compat():
    """BVLC Caffe's files (../shared/compat, or CREMA_COMPAT_DIR): the tests
    that use them skip where they are missing, and fail under CI=true."""
    if not (COMPAT / "lenet_fashion").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("the BVLC reference files are missing at %s (CI=true: they must be "
                        "there)" % COMPAT)
        pytest.skip("no BVLC reference files at %s (../shared/compat beside the checkout, "
                    "or CREMA_COMPAT_DIR)" % COMPAT)
    return COMPAT


@pytest.fixture(scope="session")
def onnxruntime():
    """ONNX Runtime (onnxruntime-node, which scripts/install_deps.sh installs
    into build/onnxruntime): the tests that use it skip where node or the
    package is missing, and fail under CI=true."""
    from onnxruntime_runner import find_onnxruntime
    runtime, missing = find_onnxruntime(SOURCE)
    if runtime is None:
        if os.environ.get("CI") == "true":
            pytest.fail("ONNX Runtime is missing (CI=true: it must be there): " + missing)
        pytest.skip("no ONNX Runtime: " + missing)
    return runtime


def central_difference(objective, array, index, step=1e-2):
    """(objective() with array[index] + step - the same with - step) / 2 step,
    array[index] restored after."""
    array[index] += step
    up = objective()
    array[index] -= 2 * step
    down = objective()
    array[index] += step
    return (up - down) / (2 * step)


def lenet_prototxt(compat, batch=16, test_batch=20):
    """BVLC's LeNet train/test net over the compat LMDB, with small batches."""
    text = (compat / "lenet_fashion/lenet_train_test.prototxt").read_text()
    lmdb = str(compat / "fashion_test_lmdb")
    text = text.replace("FASHION_TRAIN_LMDB", lmdb).replace("FASHION_TEST_LMDB", lmdb)
    assert "batch_size: 64" in text and "batch_size: 100" in text
    return (text.replace("batch_size: 64", "batch_size: %d" % batch)
                .replace("batch_size: 100", "batch_size: %d" % test_batch))


SOLVER = """net: "{net}"
type: "{type}"
base_lr: {lr}
momentum: {momentum}
momentum2: 0.999
delta: 1e-6
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 0
max_iter: {max_iter}
test_iter: 2
test_interval: 1000000
test_initialization: false
snapshot_after_train: false
snapshot_prefix: "{prefix}"
random_seed: 7
"""


@pytest.fixture
def lenet_solver(tmp_path, compat):
    """Writes LeNet and a solver of the given type; returns the solver's path."""
    def make(solver_type="SGD", max_iter=10, lr=0.01):
        net = tmp_path / "lenet.prototxt"
        net.write_text(lenet_prototxt(compat))
        momentum = 0.0 if solver_type in ("AdaGrad", "RMSProp") else 0.9
        if solver_type == "AdaDelta":
            lr, momentum = 1.0, 0.95
        solver = tmp_path / ("%s_solver.prototxt" % solver_type)
        solver.write_text(SOLVER.format(net=net, type=solver_type, lr=lr, momentum=momentum,
                                        max_iter=max_iter, prefix=tmp_path / "snap"))
        return solver
    return make
