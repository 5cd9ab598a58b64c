"""The metrics file of `crema train`: every line is JSON a user loads with
json (or pandas' read_json(lines=True)); its test values are the log's; by
default it lies beside glog's INFO file; plot_training_log.py reads it."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import SOURCE


def train(crema_tool, solver, cwd, *flags):
    """Runs crema train; returns its log (INFO shown, which the suite's
    environment may hide; glog writes its INFO file only then)."""
    run = subprocess.run([crema_tool, "train", "--solver=%s" % solver] + list(flags),
                         capture_output=True, text=True, cwd=cwd,
                         env=dict(os.environ, GLOG_minloglevel="0", GLOG_logtostderr="0"))
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stderr


def test_metrics_are_json_lines_matching_the_log(crema_tool, lenet_solver, tmp_path):
    solver = lenet_solver("SGD", max_iter=20)
    text = solver.read_text().replace("display: 0", "display: 5")
    text = text.replace("test_interval: 1000000", "test_interval: 10")
    solver.write_text(text)
    metrics = tmp_path / "run.metrics.jsonl"
    log = train(crema_tool, solver, tmp_path, "--metrics=%s" % metrics)
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    train_rows = [r for r in records if r["kind"] == "train"]
    test_rows = [r for r in records if r["kind"] == "test"]
    assert [r["iter"] for r in train_rows] == [0, 5, 10, 15]
    assert [r["iter"] for r in test_rows] == [10, 20]
    for row in train_rows:
        assert row["lr"] > 0 and row["images_per_s"] >= 0 and "loss" in row["outputs"]
    logged = [float(v) for v in re.findall(r"Test net output #0: accuracy = ([0-9.]+)", log)]
    assert [r["outputs"]["accuracy"] for r in test_rows] == [
        pytest.approx(v, abs=1e-6) for v in logged]
    times = [r["time"] for r in records]
    assert times == sorted(times)

    plot = tmp_path / "curve.png"
    run = subprocess.run([sys.executable, str(SOURCE / "scripts/plot_training_log.py"),
                          str(metrics), str(plot)], capture_output=True, text=True)
    if "matplotlib is missing" not in run.stderr:
        assert run.returncode == 0, run.stderr
        assert plot.read_bytes()[:4] == b"\x89PNG"


def test_by_default_the_metrics_lie_beside_glogs_file(crema_tool, lenet_solver, tmp_path):
    solver = lenet_solver("SGD", max_iter=4)
    solver.write_text(solver.read_text().replace("display: 0", "display: 2"))
    logs = tmp_path / "logs"
    logs.mkdir()
    stderr = train(crema_tool, solver, tmp_path, "--log_dir=%s" % logs)
    infos = [p for p in logs.iterdir() if ".log.INFO." in p.name and not p.name.endswith("jsonl")]
    assert len(infos) == 1
    beside = logs / (infos[0].name + ".metrics.jsonl")
    assert beside.is_file()
    assert "Metrics go to %s" % beside in stderr
    assert [json.loads(line)["iter"] for line in beside.read_text().splitlines()] == [0, 2]
