#!/usr/bin/env python3
"""Net surgery on a trained LeNet: read and edit parameters as numpy arrays,
then cast the fully connected layers into convolutions so that the net
classifies every 28x28 window of a bigger image in one pass.

  examples/net_surgery.py                      # the main job's weights, 4 test images
  examples/net_surgery.py --first 100 --out /tmp/lenet_full_conv.caffemodel

Steps: (1) the parameter shapes of each layer; (2) edits: a hand-made filter
in conv1 checked against numpy, zeroed conv1 weights, restored weights;
(3) ip1 (800 -> 500) becomes a 4x4 convolution over pool2's 50x4x4 maps and
ip2 a 1x1 convolution, the weights copied with reshapes; (4) on a 56x56 input
made of four test images tiled 2x2, the score map at the positions aligned
with the tiles must equal the original net's scores for them; (5) the fully
convolutional weights are saved (--out) with their prototxt beside them.
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
from google.protobuf import text_format

import crema as caffe
from crema.proto import caffe_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# What scripts/quickstart.sh (the main job) trains and converts.
WEIGHTS = os.path.join(REPO, "models/lenet/lenet_fashion_iter_10000.caffemodel")
TEST_LMDB = os.path.join(REPO, "data/fashion_mnist/fashion_test_lmdb")

LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
SCALE = 0.00390625  # LeNet's training transform_param scale
TILE = 28
STRIDE = 4          # two 2x2 poolings of stride 2: one map step is 4 input pixels


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=os.path.join(REPO, "models/lenet/deploy.prototxt"),
                        help="LeNet deploy prototxt (default: %(default)s)")
    parser.add_argument("--weights",
                        default=WEIGHTS,
                        help="trained weights (default: the main job's, %(default)s)")
    parser.add_argument("--lmdb", default=TEST_LMDB,
                        help="LMDB of 28x28 grey test images (default: %(default)s)")
    parser.add_argument("--first", type=int, default=0,
                        help="skip this many LMDB records before the four tiles")
    parser.add_argument("--out", help="where to save the fully convolutional weights "
                                      "(default: a temporary file, removed at exit)")
    parser.add_argument("--verbose", action="store_true", help="show Crema's INFO log")
    return parser.parse_args()


def read_lmdb_images(lmdb, skip, count, work_dir):
    """count raw images (0..255, (count, 1, 28, 28)) and labels from an LMDB,
    read by a Data layer."""
    path = os.path.join(work_dir, "read_lmdb.prototxt")
    with open(path, "w") as f:
        f.write('layer { name: "data" type: "Data" top: "data" top: "label"\n'
                '  data_param { source: "%s" batch_size: %d backend: LMDB } }\n'
                % (lmdb, skip + count))
    reader = caffe.Net(path, caffe.TEST)
    reader.forward()
    return (reader.blobs["data"].data[skip:].copy(),
            reader.blobs["label"].data[skip:].astype(int))


def show_params(net):
    print("(1) parameters: layer, weights, biases")
    total = 0
    for name, blobs in net.params.items():
        shapes = [tuple(b.data.shape) for b in blobs]
        count = sum(b.data.size for b in blobs)
        total += count
        print("  %-6s %-16s %-8s %7d values" % (name, shapes[0], shapes[1], count))
    print("  total %d learnable values\n" % total)


def scores(net, images):
    """ip2 scores and probabilities of the deploy net for (N, 1, 28, 28) inputs."""
    net.blobs["data"].reshape(*images.shape)
    out = net.forward(data=images, blobs=["ip2"])
    return out["ip2"].copy(), out["prob"].copy()


def correlate(image, kernel):
    """A 'valid' 2-D cross-correlation in numpy, what Convolution computes."""
    k = kernel.shape[0]
    windows = np.lib.stride_tricks.sliding_window_view(image, (k, k))
    return np.einsum("ijkl,kl->ij", windows, kernel)


def edit_params(net, images):
    print("(2) editing parameters in place: net.params[...][i].data is the net's memory")
    _, original = scores(net, images)
    saved = [b.data.copy() for b in net.params["conv1"]]

    sobel = np.zeros((5, 5), np.float32)
    sobel[1:4, 1:4] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
    net.params["conv1"][0].data[0, 0] = sobel      # filter 0: a vertical-edge detector
    net.params["conv1"][1].data[0] = 0
    _, edited = scores(net, images)
    expected = correlate(images[0, 0], sobel)
    difference = np.abs(net.blobs["conv1"].data[0, 0] - expected).max()
    assert difference < 1e-4, difference
    print("  conv1 filter 0 set to a Sobel kernel: its 24x24 map equals numpy's "
          "correlation (max |diff| %.1e);" % difference)
    print("  image 0's probabilities move by up to %.4f" % np.abs(edited[0] - original[0]).max())

    net.params["conv1"][0].data[...] = 0
    net.params["conv1"][1].data[...] = 0
    _, blind = scores(net, images)
    print("  all conv1 weights and biases zeroed: every image gets the same output, "
          "%s %.4f" % (LABELS[blind[0].argmax()], blind[0].max()))
    assert np.allclose(blind, blind[0])

    for blob, values in zip(net.params["conv1"], saved):
        blob.data[...] = values
    _, restored = scores(net, images)
    assert np.array_equal(restored, original)
    print("  weights restored from the saved copy: outputs identical to the original\n")


def full_conv_prototxt(deploy, path, height, width):
    """The deploy net with ip1/ip2 as convolutions over a height x width input."""
    net = caffe_pb2.NetParameter()
    with open(deploy) as f:
        text_format.Merge(f.read(), net)
    net.name = "LeNetFullConv"
    for layer in net.layer:
        if layer.type == "Input":
            del layer.input_param.shape[0].dim[2:]
            layer.input_param.shape[0].dim.extend([height, width])
        elif layer.name in ("ip1", "ip2"):
            num_output = layer.inner_product_param.num_output
            layer.ClearField("inner_product_param")
            layer.type = "Convolution"
            layer.name += "-conv"
            # ip1 saw pool2's whole 4x4 maps: a 4x4 kernel; ip2 saw ip1's 500 values: 1x1.
            layer.convolution_param.num_output = num_output
            layer.convolution_param.kernel_size.append(4 if layer.name == "ip1-conv" else 1)
        rename = {"ip1": "ip1-conv", "ip2": "ip2-conv"}
        layer.bottom[:] = [rename.get(b, b) for b in layer.bottom]
        layer.top[:] = [rename.get(t, t) for t in layer.top]
    with open(path, "w") as f:
        f.write(text_format.MessageToString(net))


def cast_to_conv(net, args, work_dir, height, width):
    print("(3) casting the fully connected layers into convolutions")
    prototxt = os.path.join(work_dir, "lenet_full_conv.prototxt")
    full_conv_prototxt(args.model, prototxt, height, width)
    # conv1 and conv2 keep their names, so their weights load from the file;
    # ip1-conv and ip2-conv are new names: they start from their fillers.
    net_full_conv = caffe.Net(prototxt, args.weights, caffe.TEST)
    for fc, conv in (("ip1", "ip1-conv"), ("ip2", "ip2-conv")):
        fc_shape = net.params[fc][0].data.shape
        conv_shape = net_full_conv.params[conv][0].data.shape
        net_full_conv.params[conv][0].data.flat = net.params[fc][0].data.flat   # weights
        net_full_conv.params[conv][1].data[...] = net.params[fc][1].data        # biases
        print("  %-3s weights %-10s -> %-8s weights %s" % (fc, fc_shape, conv, conv_shape))
    print("  input %dx%d: prob map %s\n" % (height, width,
                                            net_full_conv.blobs["prob"].data.shape))
    return net_full_conv, prototxt


def check_tiles(net, net_full_conv, images, labels):
    """The map positions over the tiles against the original net on each tile."""
    print("(4) four test images tiled 2x2 into one 56x56 input")
    tiled = np.zeros((1, 1, 2 * TILE, 2 * TILE), np.float32)
    for i in range(4):
        r, c = divmod(i, 2)
        tiled[0, 0, r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE] = images[i, 0]
    out = net_full_conv.forward(data=tiled, blobs=["ip2-conv"])
    score_map, prob_map = out["ip2-conv"][0], out["prob"][0]
    print("  most likely class at each of the %dx%d positions (one step = %d pixels):"
          % (prob_map.shape[1], prob_map.shape[2], STRIDE))
    for row in prob_map.argmax(axis=0):
        print("    " + " ".join(str(v) for v in row))

    ip2, prob = scores(net, images)
    worst = 0.0
    step = TILE // STRIDE
    print("  tile  label        map (r, c)  net: class prob         map: class prob")
    for i in range(4):
        r, c = divmod(i, 2)
        at = score_map[:, step * r, step * c]
        p_at = prob_map[:, step * r, step * c]
        worst = max(worst, np.abs(at - ip2[i]).max(), np.abs(p_at - prob[i]).max())
        assert np.allclose(at, ip2[i], rtol=1e-4, atol=1e-4), (i, at, ip2[i])
        assert np.allclose(p_at, prob[i], rtol=1e-4, atol=1e-5), (i, p_at, prob[i])
        print("  (%d,%d) %-12s (%d, %d)      %-11s %.4f      %-11s %.4f"
              % (r, c, LABELS[labels[i]], step * r, step * c, LABELS[prob[i].argmax()],
                 prob[i].max(), LABELS[p_at.argmax()], p_at.max()))
    print("  match: the 4 aligned positions equal the original net's outputs "
          "(max |diff| %.1e)\n" % worst)
    return tiled, prob_map


def save(net_full_conv, prototxt, out, tiled, prob_map):
    print("(5) saving the fully convolutional net")
    net_full_conv.save(out)
    out_prototxt = os.path.splitext(out)[0] + ".prototxt"
    if os.path.abspath(out_prototxt) != os.path.abspath(prototxt):
        shutil.copyfile(prototxt, out_prototxt)
    reloaded = caffe.Net(out_prototxt, out, caffe.TEST)
    again = reloaded.forward(data=tiled)["prob"][0]
    assert np.array_equal(again, prob_map)
    print("  %s (%d bytes)\n  %s\n  reloaded, they give the same map"
          % (out, os.path.getsize(out), out_prototxt))


def main():
    args = parse_args()
    if args.verbose:
        caffe.init_log(0)
    elif "GLOG_minloglevel" not in os.environ:
        caffe.init_log(1)
    for path, what in ((args.model, "--model"), (args.weights, "--weights")):
        if not os.path.isfile(path):
            sys.exit("net_surgery.py: %s %s does not exist" % (what, path))
    if not os.path.isfile(os.path.join(args.lmdb, "data.mdb")):
        sys.exit("net_surgery.py: --lmdb %s is not an LMDB; give Fashion-MNIST's test LMDB "
                 "(data/fashion_mnist/create_fashion_mnist.sh makes "
                 "data/fashion_mnist/fashion_test_lmdb)" % args.lmdb)

    caffe.set_mode_cpu()
    work_dir = tempfile.mkdtemp(prefix="net_surgery_")
    try:
        raw, labels = read_lmdb_images(args.lmdb, args.first, 4, work_dir)
        images = raw * SCALE   # what the training Data layer fed the net
        net = caffe.Net(args.model, args.weights, caffe.TEST)
        show_params(net)
        edit_params(net, images)
        net_full_conv, prototxt = cast_to_conv(net, args, work_dir, 2 * TILE, 2 * TILE)
        tiled, prob_map = check_tiles(net, net_full_conv, images, labels)
        out = args.out or os.path.join(work_dir, "lenet_full_conv.caffemodel")
        save(net_full_conv, prototxt, out, tiled, prob_map)
        if not args.out:
            print("  (a temporary folder, removed now: pass --out FILE.caffemodel to keep them)")
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
