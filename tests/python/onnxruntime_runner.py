"""ONNX Runtime for the export tests: runs a model with onnxruntime-node
through scripts/onnxruntime/run.js (installed into build/onnxruntime by
scripts/install_deps.sh). Tensors travel as raw float32 files beside a JSON
of names and shapes."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np


class OnnxRuntime:
    """`node` with run.js and the directory whose node_modules holds onnxruntime-node."""

    def __init__(self, node, script, modules):
        self.node, self.script, self.modules = node, script, modules

    def run(self, model, inputs, outputs):
        """The named outputs of `model` (a path) on `inputs` ({name: array}),
        as float32 arrays in the order asked."""
        with tempfile.TemporaryDirectory(prefix="crema_ort_") as work:
            work = pathlib.Path(work)
            request = {"inputs": [], "outputs": list(outputs)}
            for index, (name, value) in enumerate(inputs.items()):
                value = np.ascontiguousarray(value, dtype="<f4")
                value.tofile(work / ("%d.in" % index))
                request["inputs"].append({"name": name, "shape": list(value.shape),
                                          "file": "%d.in" % index})
            (work / "request.json").write_text(json.dumps(request))
            env = dict(os.environ, NODE_PATH=str(self.modules / "node_modules"))
            run = subprocess.run([self.node, str(self.script), str(model), str(work)],
                                 capture_output=True, text=True, env=env)
            if run.returncode != 0:
                raise RuntimeError("ONNX Runtime: %s" % run.stderr.strip())
            response = json.loads((work / "response.json").read_text())
            return [np.fromfile(work / out["file"], dtype="<f4").reshape(out["shape"])
                    for out in response["outputs"]]


def find_onnxruntime(source):
    """An OnnxRuntime, or the reason there is none: node not on PATH, or
    onnxruntime-node not installed (CREMA_ONNXRUNTIME_DIR, else
    <source>/build/onnxruntime)."""
    node = shutil.which("node")
    if node is None:
        return None, "node is not on PATH (apt-get install nodejs; scripts/install_deps.sh)"
    modules = pathlib.Path(os.environ.get("CREMA_ONNXRUNTIME_DIR") or
                           source / "build/onnxruntime")
    if not (modules / "node_modules/onnxruntime-node/package.json").is_file():
        return None, ("onnxruntime-node is not installed in %s (scripts/install_deps.sh, "
                      "or CREMA_ONNXRUNTIME_DIR)" % modules)
    return OnnxRuntime(node, source / "scripts/onnxruntime/run.js", modules), None
