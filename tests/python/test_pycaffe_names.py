"""pycaffe's remaining module names: has_nccl and NCCL, Timer, log, the
solver count and rank (and what they mean to a data layer), set_multiprocess,
solver.param, pycaffe's error sentences, and the `caffe` import name."""
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import crema
from conftest import SOURCE, lenet_prototxt

# Absolute: the subprocesses run from another folder.
PYTHONPATH = os.pathsep.join(os.path.abspath(p)
                             for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)


@pytest.fixture
def context_settings():
    """Restores the thread's solver count and rank after a test sets them."""
    yield
    crema.set_solver_count(1)
    crema.set_solver_rank(0)
    crema.set_multiprocess(False)


def run_python(code, **env):
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, **env), cwd="/", timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


# ---- NCCL ------------------------------------------------------------------

def test_nccl_is_refused_clearly_without_nccl(lenet_solver):
    if crema.has_nccl():
        pytest.skip("this build has NCCL: test_nccl_needs_gpu_mode checks it instead")
    assert crema.has_nccl() is False
    with pytest.raises(crema.Error, match="built without NCCL"):
        crema.NCCL.new_uid()
    solver = crema.SGDSolver(str(lenet_solver("SGD")))
    with pytest.raises(crema.Error, match="built without NCCL"):
        crema.NCCL(solver, b"\0" * 128)


def test_nccl_needs_gpu_mode_and_a_real_uid(lenet_solver):
    if not crema.has_nccl():
        pytest.skip("this build has no NCCL (has_nccl() is False; the refusal is tested)")
    uid = crema.NCCL.new_uid()
    assert isinstance(uid, bytes) and len(uid) == 128
    assert crema.NCCL.new_uid() != uid
    solver = crema.SGDSolver(str(lenet_solver("SGD")))
    crema.set_mode_cpu()
    with pytest.raises(crema.Error, match="GPU mode"):
        crema.NCCL(solver, uid)


def test_after_backward_takes_only_an_nccl_object(lenet_solver):
    solver = crema.SGDSolver(str(lenet_solver("SGD")))
    with pytest.raises(TypeError, match="NCCL object"):
        solver.net.after_backward(lambda layer: None)


# ---- Timer and log ---------------------------------------------------------

def test_timer_measures_between_start_and_stop():
    timer = crema.Timer()
    assert timer.ms == 0  # never started
    timer.start()
    time.sleep(0.05)
    timer.stop()
    first = timer.ms
    assert 45 <= first < 1000
    time.sleep(0.02)
    assert timer.ms == first  # stopped: the reading stays
    timer.start()
    time.sleep(0.01)
    running = timer.ms  # reading a running timer stops it
    assert 8 <= running < first
    time.sleep(0.02)
    assert timer.ms == running


def test_log_writes_to_crema_log():
    run = run_python("import crema; crema.init_log(0, True); crema.log('hello from python 42')",
                     PYTHONPATH=PYTHONPATH)
    assert re.search(r"^I\d{8} .*\] hello from python 42$", run.stderr, re.M), run.stderr
    quiet = run_python("import crema; crema.init_log(1, True); crema.log('not shown')",
                       PYTHONPATH=PYTHONPATH)
    assert "not shown" not in quiet.stderr


# ---- solver count and rank -------------------------------------------------

def data_net(tmp_path, compat, phase="TRAIN", batch=4):
    """A Data layer over the compat LMDB, `batch` records a batch, in `phase`."""
    path = tmp_path / ("data_%s_%d.prototxt" % (phase, batch))
    path.write_text('layer { name: "data" type: "Data" top: "data" top: "label"\n'
                    '  include { phase: %s }\n'
                    '  data_param { source: "%s" batch_size: %d backend: LMDB } }\n'
                    % (phase, compat / "fashion_test_lmdb", batch))
    return str(path)


def first_batch(path, phase):
    net = crema.Net(path, phase)
    net.forward()
    return net.blobs["data"].data.copy()


def test_solver_count_and_rank_split_the_records(tmp_path, compat, context_settings):
    assert (crema.solver_count(), crema.solver_rank()) == (1, 0)
    everything = first_batch(data_net(tmp_path, compat, "TEST", batch=8), crema.TEST)
    assert len(np.unique(everything.reshape(8, -1), axis=0)) == 8  # records 0..7 differ
    train = data_net(tmp_path, compat)
    assert np.array_equal(first_batch(train, crema.TRAIN), everything[:4])
    crema.set_solver_count(2)
    crema.set_solver_rank(1)
    assert (crema.solver_count(), crema.solver_rank()) == (2, 1)
    # Rank 1 of 2 reads every other record, from record 1.
    assert np.array_equal(first_batch(train, crema.TRAIN), everything[1::2])
    # A test net reads every record whatever the rank (only rank 0 tests).
    assert np.array_equal(first_batch(data_net(tmp_path, compat, "TEST"), crema.TEST),
                          everything[:4])
    crema.set_multiprocess(True)  # BVLC's train.py sets it; nothing else changes


def test_bad_solver_count_and_rank_are_errors(tmp_path, compat, context_settings):
    with pytest.raises(crema.Error, match="set_solver_count: 0 solvers"):
        crema.set_solver_count(0)
    with pytest.raises(crema.Error, match="set_solver_rank: rank -1"):
        crema.set_solver_rank(-1)
    assert (crema.solver_count(), crema.solver_rank()) == (1, 0)
    crema.set_solver_rank(3)  # beyond the count: refused where a reader would starve
    with pytest.raises(crema.Error, match=r"layer 'data' \(Data\): solver rank 3 is outside "
                                          r"\[0, solver count 1\)"):
        crema.Net(data_net(tmp_path, compat), crema.TRAIN)


# ---- solver.param ------------------------------------------------------------

def test_solver_param_is_the_solver_file(lenet_solver):
    solver = crema.SGDSolver(str(lenet_solver("SGD", max_iter=17, lr=0.025)))
    param = solver.param
    assert isinstance(param, crema.proto.caffe_pb2.SolverParameter)
    assert (param.max_iter, param.base_lr, param.lr_policy) == (17, pytest.approx(0.025), "inv")
    assert param.layer_wise_reduce  # BVLC's train.py reads it; true by default
    param.max_iter = 3  # a copy
    assert solver.param.max_iter == 17


# ---- pycaffe's sentences -------------------------------------------------------

def test_net_spec_type_error_has_pycaffes_words():
    data = crema.layers.DummyData(ntop=2)  # a tuple of two Tops
    with pytest.raises(TypeError,
                       match=r"^Silence input 0 is not a Top \(type is <class 'tuple'>\)$"):
        crema.layers.Silence(data, ntop=0)
    crema.layers.Silence(*data, ntop=0)


def test_forward_and_backward_mismatches_begin_with_pycaffes_words(tmp_path):
    path = tmp_path / "ip.prototxt"
    path.write_text('force_backward: true\n'
                    'layer { name: "x" type: "Input" top: "x" input_param { shape { dim: 2 '
                    'dim: 3 } } }\n'
                    'layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"\n'
                    '  inner_product_param { num_output: 2 } }\n')
    net = crema.Net(str(path), crema.TEST)
    with pytest.raises(ValueError, match=r"^Input blob arguments do not match net inputs\."):
        net.forward(z=np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"^Input is not batch sized"):
        net.forward(x=np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"^Top diff arguments do not match net outputs\."):
        net.backward(x=np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"^Diff is not batch sized"):
        net.backward(y=np.zeros((1, 2)))
    with pytest.raises(KeyError, match="nothing"):
        net.forward(blobs=["nothing"])


# ---- import caffe --------------------------------------------------------------

def test_import_caffe_is_crema_under_pycaffes_name():
    code = """
import os, caffe
import caffe.io, caffe.net_spec, caffe.draw, caffe.coord_map, caffe.classifier, caffe.detector
from caffe.proto import caffe_pb2
from caffe import layers as L, params as P
import crema
print(caffe.__file__)
assert os.path.dirname(os.path.dirname(caffe.__file__)) == \\
    os.path.dirname(os.path.dirname(crema.__file__))
assert caffe.Net is crema.Net and caffe.Classifier is crema.Classifier
assert caffe.io is crema.io and caffe.coord_map is crema.coord_map
assert caffe_pb2 is crema.proto.caffe_pb2 and L is crema.layers
assert caffe.io.__name__ == "crema.io" and caffe.io.__spec__.name == "crema.io"
assert caffe.TRAIN == crema.TRAIN and caffe.__version__ == crema.__version__
assert caffe.__doc__.startswith("Crema's `caffe` import name")
try:
    import caffe.no_such_module
except ImportError:
    pass
else:
    raise AssertionError("caffe.no_such_module imported")
"""
    run = run_python(code, PYTHONPATH=PYTHONPATH)
    folder = os.path.join(PYTHONPATH.split(os.pathsep)[0], "caffe", "__init__.py")
    assert run.stdout.strip() == folder


def test_pip_install_provides_caffe_in_a_fresh_venv(tmp_path):
    """pip install . into a new virtual environment (the build under test
    supplies the library and extension): `import caffe` answers with the
    installed package; CREMA_CAFFE_ALIAS=0 installs crema alone."""
    build = os.path.dirname(PYTHONPATH.split(os.pathsep)[0])
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        pytest.skip("PYTHONPATH names no CMake build's python folder: %s" % PYTHONPATH)
    for alias in ("1", "0"):
        venv = tmp_path / ("venv" + alias)
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                       check=True, timeout=120)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(CREMA_BUILD_DIR=build, CREMA_CAFFE_ALIAS=alias)
        install = subprocess.run([str(venv / "bin/pip"), "install", "--no-build-isolation",
                                  "--no-index", "--quiet", str(SOURCE)],
                                 capture_output=True, text=True, env=env, timeout=600)
        assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
        check = subprocess.run(
            [str(venv / "bin/python"), "-c",
             "import crema; print(crema.__file__)\n"
             "try:\n import caffe; print(caffe.__file__, caffe.Net is crema.Net)\n"
             "except ImportError: print('no caffe')"],
            capture_output=True, text=True, env=env, cwd="/", timeout=120)
        assert check.returncode == 0, check.stderr[-2000:]
        lines = check.stdout.split("\n")
        site = str(venv / "lib")
        assert lines[0].startswith(site) and lines[0].endswith("crema/__init__.py")
        if alias == "1":
            assert lines[1] == "%s True" % lines[0].replace("crema/__init__.py",
                                                             "caffe/__init__.py")
        else:
            assert lines[1] == "no caffe"
