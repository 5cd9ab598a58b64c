"""Solvers from Python: every type steps, solver.step(n) trains exactly as
`crema train` does for n iterations (bitwise), callbacks, snapshot and
restore, apply_update, and errors as Python exceptions."""
import os
import subprocess

import numpy as np
import pytest

import crema
from crema.proto import crema_pb2

TYPES = {"SGD": crema.SGDSolver, "Nesterov": crema.NesterovSolver,
         "AdaGrad": crema.AdaGradSolver, "RMSProp": crema.RMSPropSolver,
         "AdaDelta": crema.AdaDeltaSolver, "Adam": crema.AdamSolver,
         "SGDW": crema.SGDWSolver, "AdamW": crema.AdamWSolver}


def weights_of(net):
    return {name: [b.data.copy() for b in blobs] for name, blobs in net.params.items()}


@pytest.mark.parametrize("solver_type", sorted(TYPES))
def test_every_solver_type_steps(lenet_solver, solver_type):
    path = str(lenet_solver(solver_type))
    solver = TYPES[solver_type](path)
    assert solver.type == solver_type and solver.iter == 0
    before = weights_of(solver.net)
    solver.step(2)
    assert solver.iter == 2
    after = weights_of(solver.net)
    for name in before:
        assert not np.array_equal(before[name][0], after[name][0]), name
    # get_solver picks the type the file names.
    assert crema.get_solver(path).type == solver_type
    # The test net shares the training net's weights.
    assert np.array_equal(solver.test_nets[0].params["ip2"][0].data,
                          solver.net.params["ip2"][0].data)


def caffemodel_blobs(path):
    net = crema_pb2.NetParameter()
    with open(path, "rb") as f:
        net.ParseFromString(f.read())
    return {layer.name: [np.array(b.data, np.float32) for b in layer.blobs]
            for layer in net.layer if layer.blobs}


def test_step_equals_the_tool_bitwise(lenet_solver, crema_tool, tmp_path):
    iterations = 12
    path = lenet_solver("SGD", max_iter=iterations)
    text = path.read_text().replace("snapshot_after_train: false", "snapshot_after_train: true")
    path.write_text(text)
    run = subprocess.run([crema_tool, "train", "--solver=" + str(path)], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    tool = caffemodel_blobs(str(tmp_path / ("snap_iter_%d.caffemodel" % iterations)))
    solver = crema.SGDSolver(str(path))
    for _ in range(iterations):
        solver.step(1)
    python = weights_of(solver.net)
    assert set(python) == set(tool)
    for name in tool:
        for i, blob in enumerate(tool[name]):
            assert np.array_equal(python[name][i].ravel(), blob), (name, i)


def test_callbacks_snapshot_restore(lenet_solver, tmp_path):
    path = str(lenet_solver("SGD", max_iter=20))
    solver = crema.SGDSolver(path)
    calls = []
    solver.add_callback(lambda: calls.append(("start", solver.iter)),
                        lambda: calls.append(("ready", solver.iter)))
    solver.step(3)
    assert calls == [(kind, i) for i in range(3) for kind in ("start", "ready")]
    solver.snapshot()
    state = tmp_path / "snap_iter_3.solverstate"
    assert state.exists() and (tmp_path / "snap_iter_3.caffemodel").exists()
    solver.step(2)
    continued = weights_of(solver.net)
    resumed = crema.SGDSolver(path)
    resumed.restore(str(state))
    assert resumed.iter == 3
    resumed.step(2)
    for name, blobs in weights_of(resumed.net).items():
        for i, blob in enumerate(blobs):
            assert np.array_equal(blob, continued[name][i]), name


def test_custom_loop_with_apply_update(lenet_solver):
    solver = crema.SGDSolver(str(lenet_solver("SGD")))
    net = solver.net
    before = net.params["ip2"][0].data.copy()
    net.forward()
    net.backward()
    assert np.any(net.params["ip2"][0].diff != 0)
    solver.apply_update()
    assert not np.array_equal(before, net.params["ip2"][0].data)
    net.clear_param_diffs()
    assert not np.any(net.params["ip2"][0].diff)
    loss_weights = net.blob_loss_weights
    assert loss_weights["loss"] == 1 and loss_weights["ip2"] == 0


def test_solve_runs_to_max_iter(lenet_solver):
    solver = crema.get_solver(str(lenet_solver("Adam", max_iter=4)))
    solver.solve()
    assert solver.iter == 4


def test_solver_errors_raise(tmp_path, lenet_solver):
    with pytest.raises(crema.Error, match="nowhere.prototxt"):
        crema.SGDSolver(str(tmp_path / "nowhere.prototxt"))
    bad = tmp_path / "bad_solver.prototxt"
    bad.write_text('net: "%s"\ntype: "Sideways"\n' % (tmp_path / "lenet.prototxt"))
    lenet_solver("SGD")  # writes lenet.prototxt
    with pytest.raises(crema.Error, match="Sideways"):
        crema.get_solver(str(bad))
    solver = crema.SGDSolver(str(lenet_solver("SGD")))
    with pytest.raises(crema.Error, match="missing.solverstate"):
        solver.restore(str(tmp_path / "missing.solverstate"))


def test_step_releases_the_gil(lenet_solver):
    import threading
    solver = crema.SGDSolver(str(lenet_solver("SGD", max_iter=200)))
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)
    thread = threading.Thread(target=tick)
    thread.start()
    solver.step(30)
    done.set()
    thread.join()
    assert len(ticks) > 5  # the Python thread ran while the solver trained
