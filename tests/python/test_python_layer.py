"""Python layers (type: "Python"): gradients checked numerically, learnable
blobs the solver updates, errors as Python exceptions naming the layer, and
the crema tool running them on two solver threads (--solver_count=2)."""
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import crema
from conftest import central_difference, lenet_prototxt

LAYERS = '''
import threading
import numpy as np
import crema


class Square(crema.Layer):
    """top = a * bottom^2, with `a` a learnable blob of one value."""

    def setup(self, bottom, top):
        if len(bottom) != 1:
            raise ValueError("Square takes one bottom")
        if len(self.blobs) == 0:
            self.blobs.add_blob(1)
            self.blobs[0].data[...] = float(self.param_str or 1)

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        top[0].data[...] = self.blobs[0].data[0] * bottom[0].data ** 2

    def backward(self, top, propagate_down, bottom):
        x, dy = bottom[0].data, top[0].diff
        self.blobs[0].diff[0] = np.sum(x * x * dy)
        if propagate_down[0]:
            bottom[0].diff[...] = 2 * self.blobs[0].data[0] * x * dy


class Identity(crema.Layer):
    """Passes data through; records the threads that ran it in param_str's file."""

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        top[0].data[...] = bottom[0].data
        with open(self.param_str, "a") as f:
            f.write("%d %d\\n" % (id(self), threading.get_ident()))

    def backward(self, top, propagate_down, bottom):
        if propagate_down[0]:
            bottom[0].diff[...] = top[0].diff


class Broken(crema.Layer):
    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        raise ValueError("broken on purpose")
'''


@pytest.fixture
def layer_dir(tmp_path, monkeypatch):
    (tmp_path / "pylayers.py").write_text(LAYERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("pylayers", None)
    return tmp_path


def square_net(layer_dir, layer="Square", param_str="1.5"):
    path = layer_dir / ("%s.prototxt" % layer)
    path.write_text(textwrap.dedent('''\
        force_backward: true
        layer { name: "x" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
        layer { name: "sq" type: "Python" bottom: "x" top: "y"
                python_param { module: "pylayers" layer: "%s" param_str: "%s" } }
        ''' % (layer, param_str)))
    return crema.Net(str(path), crema.TRAIN)


def test_python_layer_gradients_match_finite_differences(layer_dir):
    net = square_net(layer_dir)
    layer = net.layer_dict["sq"]
    assert isinstance(layer, crema.Layer) and layer.param_str == "1.5"
    assert layer.phase == crema.TRAIN and layer.type == "Python"
    assert list(net.params) == ["sq"] and net.params["sq"][0].data[0] == 1.5
    rng = np.random.RandomState(3)
    x = rng.randn(2, 3).astype(np.float32)
    dy = rng.rand(2, 3).astype(np.float32)
    objective = lambda: float(np.sum(dy * net.forward(x=x)["y"]))  # noqa: E731
    objective()
    dx = net.backward(y=dy)["x"].copy()
    da = float(net.params["sq"][0].diff[0])
    for index in np.ndindex(x.shape):
        assert dx[index] == pytest.approx(central_difference(objective, x, index),
                                          rel=1e-2, abs=1e-3)
    a = net.params["sq"][0].data
    assert da == pytest.approx(central_difference(objective, a, (0,)), rel=1e-2)


def test_python_layer_blobs_are_saved_with_the_net(layer_dir):
    net = square_net(layer_dir)
    net.params["sq"][0].data[0] = 4.0
    net.save(str(layer_dir / "sq.caffemodel"))
    again = square_net(layer_dir)
    again.copy_from(str(layer_dir / "sq.caffemodel"))
    assert again.params["sq"][0].data[0] == 4.0


def test_python_layer_errors_raise_with_the_message(layer_dir):
    with pytest.raises(crema.Error, match="Broken.*forward.*broken on purpose"):
        square_net(layer_dir, "Broken").forward(x=np.ones((2, 3), np.float32))
    with pytest.raises(crema.Error, match="NoSuchLayer"):
        square_net(layer_dir, "NoSuchLayer")
    bad = layer_dir / "bad.prototxt"
    bad.write_text('layer { name: "p" type: "Python" top: "t" '
                   'python_param { module: "no_such_module_here" layer: "X" } }')
    with pytest.raises(crema.Error, match="no_such_module_here"):
        crema.Net(str(bad), crema.TEST)


def lenet_with_identity(compat, log):
    """BVLC LeNet with a Python Identity layer between ip2 and the loss."""
    text = lenet_prototxt(compat)
    text = text.replace('bottom: "ip2"\n  bottom: "label"\n  top: "loss"',
                        'bottom: "ip2py"\n  bottom: "label"\n  top: "loss"')
    assert "ip2py" in text, "the BVLC LeNet's loss layer no longer reads as expected"
    identity = textwrap.dedent('''\
        layer { name: "identity" type: "Python" bottom: "ip2" top: "ip2py"
                python_param { module: "pylayers" layer: "Identity" param_str: "%s" } }
        ''' % log)
    loss = text.index('layer {\n  name: "loss"')
    return text[:loss] + identity + text[loss:]


def identity_lenet_solver(layer_dir, compat, settings):
    """Writes LeNet with the Identity layer and an SGD solver over it with
    `settings` (solver fields); returns the solver's path and the layer's log."""
    log = layer_dir / "threads.txt"
    net = layer_dir / "lenet_py.prototxt"
    net.write_text(lenet_with_identity(compat, log))
    solver = layer_dir / "solver.prototxt"
    solver.write_text('net: "%s"\nbase_lr: 0.01\nlr_policy: "fixed"\ntest_iter: 1\n'
                      'snapshot_after_train: false\nrandom_seed: 1\n%s\n' % (net, settings))
    return solver, log


def test_python_layer_trains_from_python(layer_dir, compat):
    solver, log = identity_lenet_solver(
        layer_dir, compat, "max_iter: 3 test_interval: 1000 test_initialization: false")
    s = crema.SGDSolver(str(solver))
    s.step(3)  # releases the GIL; the layer takes it back on the solver's thread
    assert len(log.read_text().splitlines()) == 3  # the test net never ran (interval 1000)


def test_python_layer_under_two_solver_threads(layer_dir, compat, crema_tool):
    solver, log = identity_lenet_solver(layer_dir, compat,
                                        "max_iter: 4 display: 0 test_interval: 2")
    package = pathlib.Path(crema.__file__).parent.parent
    env = dict(os.environ, GLOG_minloglevel="0",
               PYTHONPATH=os.pathsep.join([str(layer_dir), str(package)]))
    run = subprocess.run([crema_tool, "train", "--solver=" + str(solver), "--solver_count=2"],
                         cwd=layer_dir, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Iteration 4" in run.stderr
    calls = [line.split() for line in log.read_text().splitlines()]
    per_instance = {}
    for instance, thread in calls:
        per_instance.setdefault(instance, []).append(thread)
    # Each solver's training net has its own layer, run 4 times on that
    # solver's thread; the root's test net has a third, run by the root at
    # iterations 0, 2 and 4. (display: 0, else the root forwards once more at
    # the end to report the loss.)
    training = [threads for threads in per_instance.values() if len(threads) == 4]
    assert len(per_instance) == 3 and len(training) == 2, {k: len(v) for k, v in per_instance.items()}
    assert all(len(set(threads)) == 1 for threads in training)
    assert training[0][0] != training[1][0]
