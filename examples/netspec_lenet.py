#!/usr/bin/env python3
"""Write LeNet in Python with NetSpec, write its solver from Python, train it.

  examples/netspec_lenet.py                                  # 2,000 iterations
  examples/netspec_lenet.py --iterations 50 --test-batches 5 \\
      --train-lmdb data/fashion_mnist/fashion_test_lmdb \\
      --test-lmdb data/fashion_mnist/fashion_test_lmdb          # a few seconds

The nets are built with caffe.NetSpec(), caffe.layers and caffe.params and
written as lenet_train.prototxt and lenet_test.prototxt (the test net adds an
Accuracy layer); the solver is a caffe_pb2.SolverParameter filled in Python
and written as text (lenet_solver.prototxt). caffe.get_solver() loads it,
training runs for --iterations and the test net's accuracy is reported.
Files go to --out-dir (default: a temporary folder removed at exit).
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

from google.protobuf import text_format

import crema as caffe
from crema import layers as L, params as P
from crema.proto import caffe_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(REPO, "data/fashion_mnist")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-lmdb", default=os.path.join(DATA, "fashion_train_lmdb"),
                        help="training LMDB (default: %(default)s)")
    parser.add_argument("--test-lmdb", default=os.path.join(DATA, "fashion_test_lmdb"),
                        help="test LMDB (default: %(default)s)")
    parser.add_argument("--iterations", type=int, default=2000, help="training iterations")
    parser.add_argument("--batch", type=int, default=64, help="training batch size")
    parser.add_argument("--test-batch", type=int, default=100, help="test batch size")
    parser.add_argument("--test-batches", type=int, default=100,
                        help="test batches for the accuracy (100 x 100 = the whole test set)")
    parser.add_argument("--display", type=int, default=0,
                        help="print the loss every N iterations (default: 10 lines in all)")
    parser.add_argument("--seed", type=int, help="random seed (weight init, data order)")
    parser.add_argument("--out-dir", help="keep the prototxt files and final snapshot here")
    parser.add_argument("--show", action="store_true", help="print the generated prototxt text")
    parser.add_argument("--verbose", action="store_true", help="show Crema's INFO log")
    return parser.parse_args()


def lenet(lmdb, batch_size, with_accuracy):
    """LeNet over an LMDB of 28x28 grey images, as a NetParameter."""
    learned = dict(param=[dict(lr_mult=1), dict(lr_mult=2)],
                   weight_filler=dict(type="xavier"), bias_filler=dict(type="constant"))
    n = caffe.NetSpec()
    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB, source=lmdb,
                             transform_param=dict(scale=1. / 255), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20, **learned)
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50, **learned)
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.ip1 = L.InnerProduct(n.pool2, num_output=500, **learned)
    n.relu1 = L.ReLU(n.ip1, in_place=True)
    n.ip2 = L.InnerProduct(n.relu1, num_output=10, **learned)
    n.loss = L.SoftmaxWithLoss(n.ip2, n.label)
    if with_accuracy:
        n.accuracy = L.Accuracy(n.ip2, n.label)
    return n.to_proto()


def lenet_solver(train_net, test_net, args, out_dir):
    """SGD with momentum and the "inv" policy, as models/lenet's solver."""
    s = caffe_pb2.SolverParameter()
    s.train_net = train_net
    s.test_net.append(test_net)
    s.test_iter.append(args.test_batches)
    # Tested by this script after training; `crema train` with this file
    # tests once, at the end.
    s.test_interval = args.iterations
    s.test_initialization = False
    s.type = "SGD"
    s.base_lr = 0.01
    s.momentum = 0.9
    s.weight_decay = 5e-4
    s.lr_policy = "inv"
    s.gamma = 1e-4
    s.power = 0.75
    s.display = 0
    s.max_iter = args.iterations
    s.snapshot_prefix = os.path.join(out_dir, "lenet")
    s.solver_mode = caffe_pb2.SolverParameter.CPU
    if args.seed is not None:
        s.random_seed = args.seed
    return s


def write(path, message):
    with open(path, "w") as f:
        f.write(text_format.MessageToString(message))   # the prototxt text
    return path


def describe(net_param):
    for layer in net_param.layer:
        print("  %-9s %-16s %s -> %s" % (layer.name, layer.type, ", ".join(layer.bottom) or "-",
                                         ", ".join(layer.top)))


def test_accuracy(net, batches):
    """The mean of the test net's Accuracy output over `batches` batches."""
    total = 0.0
    for _ in range(batches):
        total += float(net.forward()["accuracy"])
    return total / batches


def main():
    args = parse_args()
    if args.verbose:
        caffe.init_log(0)
    elif "GLOG_minloglevel" not in os.environ:
        caffe.init_log(1)
    for path, what in ((args.train_lmdb, "--train-lmdb"), (args.test_lmdb, "--test-lmdb")):
        if not os.path.isfile(os.path.join(path, "data.mdb")):
            sys.exit("netspec_lenet.py: %s %s is not an LMDB. Make Fashion-MNIST's LMDBs with "
                     "data/fashion_mnist/create_fashion_mnist.sh, or pass another LMDB of 28x28 "
                     "grey Datums (e.g. data/fashion_mnist/fashion_test_lmdb for both)"
                     % (what, path))
    if args.iterations < 1 or args.test_batches < 1:
        sys.exit("netspec_lenet.py: --iterations and --test-batches must be >= 1")
    display = args.display or max(1, args.iterations // 10)

    out_dir = args.out_dir or tempfile.mkdtemp(prefix="netspec_lenet_")
    os.makedirs(out_dir, exist_ok=True)
    try:
        train_proto = lenet(os.path.abspath(args.train_lmdb), args.batch, with_accuracy=False)
        test_proto = lenet(os.path.abspath(args.test_lmdb), args.test_batch, with_accuracy=True)
        train_path = write(os.path.join(out_dir, "lenet_train.prototxt"), train_proto)
        test_path = write(os.path.join(out_dir, "lenet_test.prototxt"), test_proto)
        solver_param = lenet_solver(train_path, test_path, args, out_dir)
        solver_path = write(os.path.join(out_dir, "lenet_solver.prototxt"), solver_param)

        print("test net written by NetSpec (%s):" % test_path)
        describe(test_proto)
        if args.show:
            print("\n%s" % text_format.MessageToString(test_proto))
        text = text_format.MessageToString(solver_param).strip()
        print("\nsolver (%s):\n  %s\n" % (solver_path, text.replace("\n", "\n  ")))

        caffe.set_mode_cpu()
        solver = caffe.get_solver(solver_path)
        start = time.time()
        while solver.iter < args.iterations:
            solver.step(min(display, args.iterations - solver.iter))
            print("iteration %5d  loss %.4f  (%.1fs)"
                  % (solver.iter, float(solver.net.blobs["loss"].data), time.time() - start))
        accuracy = test_accuracy(solver.test_nets[0], args.test_batches)
        print("\ntest accuracy after %d iterations: %.4f (%d batches of %d)"
              % (solver.iter, accuracy, args.test_batches, args.test_batch))
        if args.out_dir:
            solver.snapshot()
            print("files in %s: %s" % (out_dir, " ".join(sorted(os.listdir(out_dir)))))
    finally:
        if not args.out_dir:
            shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
