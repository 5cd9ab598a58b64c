"""crema.Net and crema.Blob as a pycaffe user sees them: numpy views that
write through, shapes after reshape, forward/backward by blob name checked
against the C++ tool and against finite differences, BVLC weights in and out,
and bad input raising Python exceptions with the C++ message."""
import ctypes
import os
import re
import subprocess

import numpy as np
import pytest

import crema
from crema.proto import crema_pb2
from conftest import central_difference, lenet_prototxt

DEPLOY_INPUT = 'layer { name: "data" type: "Input" top: "data" ' \
               'input_param { shape { dim: 2 dim: 1 dim: 28 dim: 28 } } }\n'


def deploy_lenet(tmp_path, compat):
    """BVLC's LeNet with an Input layer of 2 images instead of the data layers."""
    net = crema_pb2.NetParameter()
    from google.protobuf import text_format
    text_format.Merge(lenet_prototxt(compat), net)
    keep = [layer for layer in net.layer
            if layer.type not in ("Data", "Accuracy", "SoftmaxWithLoss")]
    del net.layer[:]
    text = DEPLOY_INPUT + "".join(
        "layer {\n%s}\n" % text_format.MessageToString(layer) for layer in keep)
    text += 'layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }\n'
    path = tmp_path / "deploy.prototxt"
    path.write_text("force_backward: true\n" + text)
    return str(path)


@pytest.fixture
def deploy(tmp_path, compat):
    return crema.Net(deploy_lenet(tmp_path, compat),
                     str(compat / "lenet_fashion/lenet_fashion_iter_10000.caffemodel"), crema.TEST)


def test_blob_views_write_through_and_follow_reshape():
    blob = crema.Blob([2, 3])
    view = blob.data
    view[...] = np.arange(6).reshape(2, 3)
    assert np.array_equal(blob.data, np.arange(6).reshape(2, 3))  # a new view sees the write
    blob.diff[1, 2] = 5
    assert blob.diff[1, 2] == 5 and blob.data[1, 2] == 5
    blob.reshape(3, 2)
    assert blob.shape == (3, 2) and blob.data.shape == (3, 2)
    assert (blob.num, blob.count) == (3, 6)
    blob.reshape(1, 2, 3, 4)
    assert (blob.channels, blob.height, blob.width) == (2, 3, 4)


def freed(array):
    """Whether AddressSanitizer holds `array`'s memory as freed (poisoned):
    None where the process does not run on ASan's runtime. numpy's own code
    is not instrumented, so a write through a view into freed memory would
    pass unseen: the check asks the runtime instead."""
    try:
        check = ctypes.CDLL(None).__asan_address_is_poisoned
    except AttributeError:
        assert os.environ.get("CREMA_EXPECT_ASAN") != "1", "not running on ASan's runtime"
        return None
    check.restype, check.argtypes = ctypes.c_int, [ctypes.c_void_p]
    return bool(check(array.ctypes.data))


def test_a_view_outlives_the_memory_its_blob_gives_up():
    blob = crema.Blob([2, 3])
    stale = blob.data
    blob.reshape(64, 64, 8)  # more values: the blob takes new memory
    assert freed(stale) in (None, False)
    stale[...] = 1           # writes the old memory, kept alive by the view
    assert stale.sum() == 6
    fresh = blob.data
    fresh[...] = 2
    assert blob.data.sum() == 2 * 64 * 64 * 8 and stale.sum() == 6
    del blob                 # the views keep what they point into
    assert freed(stale) in (None, False) and freed(fresh) in (None, False)
    assert fresh[0, 0, 0] == 2 and stale[0, 0] == 1


FOLDED_NET = """name: "folded"
layer { name: "data" type: "Input" top: "data"
  input_param { shape { dim: 1 dim: 16 dim: 6 dim: 6 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 16 kernel_size: 3 pad: 1
    weight_filler { type: "gaussian" std: 0.2 } } }
layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
  scale_param { bias_term: true } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
"""


def test_a_weight_view_kept_across_passes_writes_through(tmp_path):
    """A deploy net folds conv + BatchNorm + Scale + ReLU into one packed
    convolution: a numpy view of the weights, kept and written after a pass,
    must still change the next pass (the packing is not stale)."""
    path = tmp_path / "folded.prototxt"
    path.write_text(FOLDED_NET)
    net = crema.Net(str(path), crema.TEST)
    net.params["bn"][2].data[...] = 1
    net.params["bn"][1].data[...] = 1
    net.blobs["data"].data[...] = np.random.RandomState(0).standard_normal((1, 16, 6, 6))
    weights = net.params["conv"][0].data  # kept across passes
    before = net.forward()["conv"].copy()
    weights[...] *= -1
    after = net.forward()["conv"].copy()
    # relu(-x) where relu(x) was: the active sets swap (bias and mean are 0)
    assert before.max() > 0 and after.max() > 0
    assert np.all((before > 0) <= (after == 0))
    weights[...] = 0
    assert np.all(net.forward()["conv"] == 0)


def test_net_blobs_params_and_names(deploy):
    assert deploy.inputs == ["data"] and deploy.outputs == ["prob"]
    assert list(deploy.blobs)[:3] == ["data", "conv1", "pool1"]
    assert list(deploy.params) == ["conv1", "conv2", "ip1", "ip2"]
    assert deploy.params["conv1"][0].data.shape == (20, 1, 5, 5)
    assert deploy.top_names["conv1"] == ["conv1"] and deploy.bottom_names["conv1"] == ["data"]
    assert deploy.layer_dict["ip1"].type == "InnerProduct"
    assert list(deploy._layer_names)[0] == "data"
    assert deploy.blob_loss_weights["prob"] == 0 and len(deploy.blob_loss_weights) == len(deploy.blobs)
    # Writing a parameter view changes the net's output.
    image = np.random.RandomState(0).rand(2, 1, 28, 28).astype(np.float32)
    before = deploy.forward(data=image)["prob"].copy()
    deploy.params["ip2"][1].data[...] += 10 * np.arange(10)
    after = deploy.forward(data=image)["prob"]
    assert not np.allclose(before, after)
    assert np.argmax(after, axis=1).tolist() == [9, 9]


def test_reshape_input_propagates(deploy):
    deploy.blobs["data"].reshape(5, 1, 28, 28)
    deploy.reshape()
    assert deploy.blobs["prob"].data.shape == (5, 10)
    out = deploy.forward(data=np.zeros((5, 1, 28, 28), np.float32))
    assert out["prob"].shape == (5, 10)


def tool_test_outputs(crema_tool, model, weights, iterations):
    """`crema test`'s mean accuracy and loss."""
    run = subprocess.run([crema_tool, "test", "--model=" + model, "--weights=" + weights,
                          "--iterations=%d" % iterations], capture_output=True, text=True,
                         env=dict(os.environ, GLOG_minloglevel="0"))
    assert run.returncode == 0, run.stderr[-2000:]
    found = dict(re.findall(r"\] (accuracy|loss) = ([0-9.e+-]+)", run.stderr + run.stdout))
    return float(found["accuracy"]), float(found["loss"])


def test_forward_matches_the_tool(tmp_path, compat, crema_tool):
    model = tmp_path / "lenet.prototxt"
    model.write_text(lenet_prototxt(compat, test_batch=50))
    weights = str(compat / "lenet_fashion/lenet_fashion_iter_10000.caffemodel")
    accuracy, loss = tool_test_outputs(crema_tool, str(model), weights, 4)
    net = crema.Net(str(model), weights, crema.TEST)
    # forward returns views of the output blobs: each batch's values are
    # taken before the next forward overwrites them.
    outs = [{k: float(v) for k, v in net.forward().items()} for _ in range(4)]
    assert np.mean([o["accuracy"] for o in outs]) == pytest.approx(accuracy, abs=1e-6)
    assert np.mean([o["loss"] for o in outs]) == pytest.approx(loss, rel=1e-4)


def smooth_net(tmp_path):
    """Input (2 x 6) -> InnerProduct -> TanH -> InnerProduct -> Softmax: no
    kinks (ReLU, max pooling) for finite differences to straddle."""
    text = """force_backward: true
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 6 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
  inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.8 }
                        bias_filler { type: "gaussian" std: 0.3 } } }
layer { name: "tanh" type: "TanH" bottom: "ip1" top: "tanh" }
layer { name: "ip2" type: "InnerProduct" bottom: "tanh" top: "ip2"
  inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 0.8 } } }
layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }
"""
    path = tmp_path / "smooth.prototxt"
    path.write_text(text)
    crema.set_random_seed(5)
    return crema.Net(str(path), crema.TEST)


def test_backward_matches_finite_differences(tmp_path):
    net = smooth_net(tmp_path)
    rng = np.random.RandomState(1)
    inputs = rng.randn(2, 6).astype(np.float32)
    weights = rng.rand(2, 4).astype(np.float32)  # objective: sum(weights * prob)
    net.forward(data=inputs)
    grad = net.backward(prob=weights)["data"].copy()
    ip1_grad = net.params["ip1"][0].diff.copy()
    objective = lambda: float(np.sum(weights * net.forward(data=inputs)["prob"]))  # noqa: E731
    for index in np.ndindex(inputs.shape):
        numeric = central_difference(objective, inputs, index)
        assert grad[index] == pytest.approx(numeric, rel=0.02, abs=2e-4)
    weight = net.params["ip1"][0].data
    for index in [(0, 0), (2, 3), (4, 5)]:
        numeric = central_difference(objective, weight, index)
        assert ip1_grad[index] == pytest.approx(numeric, rel=0.02, abs=2e-4)


def test_forward_start_end_and_extra_blobs(deploy):
    image = np.ones((2, 1, 28, 28), np.float32)
    full = deploy.forward(blobs=["ip1"], data=image)
    assert set(full) == {"prob", "ip1"}
    ip1 = full["ip1"].copy()
    partial = deploy.forward(start="ip2", end="prob")
    assert np.allclose(partial["prob"], full["prob"])
    # relu1 works in place on ip1: ending at ip1 gives it before the ReLU.
    before_relu = deploy.forward(end="ip1")
    assert set(before_relu) == {"ip1"}
    assert np.array_equal(np.maximum(before_relu["ip1"], 0), ip1)


def test_forward_all_pads_and_trims(deploy):
    images = np.random.RandomState(2).rand(5, 1, 28, 28).astype(np.float32)
    out = deploy.forward_all(data=images)["prob"]
    assert out.shape == (5, 10)
    for i in range(5):
        single = deploy.forward(data=np.stack([images[i], images[i]]))["prob"][0]
        assert np.allclose(out[i], single, atol=1e-6)


def test_caffemodel_round_trip(tmp_path, compat, deploy):
    bvlc = crema_pb2.NetParameter()
    bvlc.ParseFromString((compat / "lenet_fashion/lenet_fashion_iter_10000.caffemodel").read_bytes())
    by_name = {layer.name: layer for layer in bvlc.layer}
    for name, blobs in deploy.params.items():
        for i, blob in enumerate(blobs):
            expected = np.array(by_name[name].blobs[i].data, np.float32)
            assert np.array_equal(blob.data.ravel(), expected)
    saved = tmp_path / "saved.caffemodel"
    deploy.save(str(saved))
    again = crema.Net(deploy_lenet(tmp_path, compat), crema.TEST, weights=str(saved))
    for name, blobs in deploy.params.items():
        for i, blob in enumerate(blobs):
            assert np.array_equal(again.params[name][i].data, blob.data)
    fresh = crema.Net(deploy_lenet(tmp_path, compat), crema.TEST)
    fresh.copy_from(str(saved))
    assert np.array_equal(fresh.params["ip2"][0].data, deploy.params["ip2"][0].data)


def test_netspec_net_runs_in_cpp(tmp_path):
    L = crema.layers
    n = crema.NetSpec()
    n.data = L.Input(shape=dict(dim=[3, 2]))
    n.ip = L.InnerProduct(n.data, num_output=4, weight_filler=dict(type="constant", value=1))
    n.relu = L.ReLU(n.ip, in_place=True)
    path = tmp_path / "spec.prototxt"
    path.write_text(str(n.to_proto()))
    net = crema.Net(str(path), crema.TEST)
    out = net.forward(data=np.array([[1, 2], [-3, 1], [0, 5]], np.float32))
    assert np.array_equal(out["ip"], [[3, 3, 3, 3], [0, 0, 0, 0], [5, 5, 5, 5]])


def test_missing_and_malformed_files_raise(tmp_path, compat):
    with pytest.raises(crema.Error, match="no_such.prototxt"):
        crema.Net(str(tmp_path / "no_such.prototxt"), crema.TEST)
    bad = tmp_path / "bad.prototxt"
    bad.write_text('name: "x"\nlayer { name: "a" type: "Input" top: "a" oops }\n')
    with pytest.raises(crema.Error, match=r"bad.prototxt.*2"):
        crema.Net(str(bad), crema.TEST)
    with pytest.raises(crema.Error, match="phase"):
        crema.Net(deploy_lenet(tmp_path, compat), 7)
    with pytest.raises(RuntimeError, match="missing.caffemodel"):
        crema.Net(deploy_lenet(tmp_path, compat), str(tmp_path / "missing.caffemodel"), crema.TEST)


def test_wrong_shapes_raise(deploy):
    with pytest.raises(ValueError):
        deploy.blobs["data"].data[...] = np.zeros((3, 1, 28, 28), np.float32)
    with pytest.raises(ValueError, match="batch"):
        deploy.forward(data=np.zeros((3, 1, 28, 28), np.float32))
    with pytest.raises(ValueError, match="not among"):
        deploy.forward(nonsense=np.zeros((2, 1, 28, 28), np.float32))
    with pytest.raises(ValueError, match="no layer named"):
        deploy.forward(start="nope")
    with pytest.raises(crema.Error):
        deploy.blobs["data"].reshape(-1, 2)


def test_layer_type_list_and_modes():
    types = crema.layer_type_list()
    for name in ("Convolution", "Data", "ImageData", "Python", "SoftmaxWithLoss"):
        assert name in types
    crema.set_mode_cpu()
    crema.set_random_seed(3)


def test_set_input_arrays_feeds_memory_data(tmp_path):
    path = tmp_path / "memory.prototxt"
    path.write_text('layer { name: "data" type: "MemoryData" top: "data" top: "label"\n'
                    '  memory_data_param { batch_size: 2 channels: 1 height: 1 width: 3 } }\n'
                    'layer { name: "scale" type: "Power" bottom: "data" top: "scaled"\n'
                    '  power_param { scale: 2 } }\n')
    net = crema.Net(str(path), crema.TEST)
    data = np.arange(12, dtype=np.float32).reshape(4, 1, 1, 3)
    labels = np.array([5, 6, 7, 8], np.float32)
    net.set_input_arrays(data, labels)
    first = net.forward()
    assert np.array_equal(first["scaled"].ravel(), 2 * np.arange(6))
    assert np.array_equal(net.blobs["label"].data, [5, 6])
    second = net.forward()
    assert np.array_equal(second["scaled"].ravel(), 2 * np.arange(6, 12))
    with pytest.raises(crema.Error, match="multiple of the batch size"):
        net.set_input_arrays(data[:3], labels[:3])
    with pytest.raises(crema.Error, match="labels"):
        net.set_input_arrays(data, labels[:2])


def test_forward_backward_all(tmp_path):
    net = smooth_net(tmp_path)
    inputs = np.random.RandomState(4).randn(5, 6).astype(np.float32)
    diffs = np.ones((5, 4), np.float32)
    forward, backward = net.forward_backward_all(data=inputs, prob=diffs)
    assert forward["prob"].shape == (5, 4) and backward["data"].shape == (5, 6)
    for i in range(5):
        pair = np.stack([inputs[i], inputs[i]])
        expected = net.forward(data=pair)["prob"][0].copy()
        assert np.allclose(forward["prob"][i], expected, atol=1e-6)
        grad = net.backward(prob=np.ones((2, 4), np.float32))["data"][0]
        assert np.allclose(backward["data"][i], grad, atol=1e-6)


# A full disk played by a file-size limit (writes past it fail with "File too
# large", as with ENOSPC), in a child process so that the limit binds nothing
# else: a failed save raises naming the file, leaves the previous file
# byte-identical and no temporary beside it.
SAVE_UNDER_LIMIT = r"""
import os, resource, signal, sys
import crema
folder, method = sys.argv[1], sys.argv[2]
def net(outputs):
    text = os.path.join(folder, "n%d.prototxt" % outputs)
    with open(text, "w") as f:
        f.write('layer { name: "data" type: "Input" top: "data" '
                'input_param { shape { dim: 1 dim: 8 } } } '
                'layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" '
                'inner_product_param { num_output: %d } }' % outputs)
    return crema.Net(text, crema.TEST)
path = os.path.join(folder, "out", "weights")
getattr(net(2), method)(path)
before = open(path, "rb").read()
bigger = net(4000)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 16, resource.RLIM_INFINITY))
try:
    getattr(bigger, method)(path)
    sys.exit("the save did not fail")
except (IOError, RuntimeError) as error:
    message = str(error)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
assert path in message and "File too large" in message, message
assert open(path, "rb").read() == before, "the previous file changed"
assert os.listdir(os.path.dirname(path)) == ["weights"], os.listdir(os.path.dirname(path))
print(message)
"""


@pytest.mark.parametrize("method", ["save", "save_hdf5"])
def test_a_failed_save_keeps_the_previous_file(tmp_path, method):
    (tmp_path / "out").mkdir()
    run = subprocess.run([os.sys.executable, "-c", SAVE_UNDER_LIMIT, str(tmp_path), method],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
