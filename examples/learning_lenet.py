#!/usr/bin/env python3
"""Train LeNet on Fashion-MNIST from Python with a training loop of your own:
solver.step(1) per iteration, the loss read from the net's blobs, the test
accuracy computed with numpy from the test net's ip2 scores and labels.

  examples/learning_lenet.py                      # 2,000 iterations, ~0.87 accuracy
  examples/learning_lenet.py --iterations 50 --test-interval 25 --test-batches 5 \\
      --train-lmdb data/fashion_mnist/fashion_test_lmdb \\
      --test-lmdb data/fashion_mnist/fashion_test_lmdb   # a few seconds

The solver and net come from models/lenet/ (--solver); their data sources are
replaced by --train-lmdb/--test-lmdb and the generated files, like any
snapshot, go to --out-dir (default: a temporary folder removed at exit).
Nothing is written to the source tree.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np
from google.protobuf import text_format

import crema as caffe
from crema.proto import caffe_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(REPO, "data/fashion_mnist")


def shown(path):
    """A path as short as it gets: relative to the working folder or absolute."""
    return min(os.path.abspath(path), os.path.relpath(path), key=len)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--solver",
                        default=os.path.join(REPO, "models/lenet/lenet_solver.prototxt"),
                        help="solver prototxt to start from (default: %(default)s); its net "
                             "path is relative to the checkout's root")
    parser.add_argument("--train-lmdb", default=os.path.join(DATA, "fashion_train_lmdb"),
                        help="training LMDB (default: %(default)s)")
    parser.add_argument("--test-lmdb", default=os.path.join(DATA, "fashion_test_lmdb"),
                        help="test LMDB (default: %(default)s)")
    parser.add_argument("--iterations", type=int, default=2000, help="training iterations")
    parser.add_argument("--test-interval", type=int, default=250,
                        help="test every N iterations (and before the first and after the last)")
    parser.add_argument("--test-batches", type=int, default=100,
                        help="test batches per test (100 x 100 = the whole test set)")
    parser.add_argument("--seed", type=int, help="random seed (weight init, data order)")
    parser.add_argument("--out-dir", help="keep the solver, net and final snapshot here")
    parser.add_argument("--plot", help="save a loss/accuracy plot to this file (matplotlib)")
    parser.add_argument("--verbose", action="store_true", help="show Crema's INFO log")
    return parser.parse_args()


def read_text_proto(path, message):
    with open(path) as f:
        text_format.Merge(f.read(), message)
    return message


def write_text_proto(path, message):
    with open(path, "w") as f:
        f.write(text_format.MessageToString(message))


def make_solver_files(args, out_dir):
    """The solver and its net, rewritten for our loop: LMDB sources, no
    testing or snapshots of its own, files in out_dir. Returns the solver path."""
    solver = read_text_proto(args.solver, caffe_pb2.SolverParameter())
    if not solver.net:
        sys.exit("learning_lenet.py: %s must name one train/test net with `net:`" % args.solver)
    # Relative to the checkout's root (as models/lenet's solver is written),
    # else to the solver's folder.
    net_path = os.path.join(REPO, solver.net)
    if not os.path.isfile(net_path):
        net_path = os.path.join(os.path.dirname(os.path.abspath(args.solver)), solver.net)
    net = read_text_proto(net_path, caffe_pb2.NetParameter())
    sources = {caffe_pb2.TRAIN: os.path.abspath(args.train_lmdb),
               caffe_pb2.TEST: os.path.abspath(args.test_lmdb)}
    data_layers = [layer for layer in net.layer if layer.type == "Data"]
    phases = sorted(layer.include[0].phase for layer in data_layers if layer.include)
    if len(data_layers) != 2 or phases != sorted(sources):
        sys.exit("learning_lenet.py: %s needs one Data layer per phase (include { phase: ... })"
                 % net_path)
    for layer in data_layers:
        layer.data_param.source = sources[layer.include[0].phase]
    write_text_proto(os.path.join(out_dir, "lenet_train_test.prototxt"), net)

    solver.net = os.path.join(out_dir, "lenet_train_test.prototxt")
    # The loop below tests with numpy; the solver's own test (which needs a
    # positive interval, as in Caffe) would only come after the last step.
    solver.test_interval = args.iterations
    solver.test_initialization = False
    solver.max_iter = args.iterations
    solver.display = 0
    solver.snapshot = 0
    solver.snapshot_prefix = os.path.join(out_dir, "lenet")
    if args.seed is not None:
        solver.random_seed = args.seed
    path = os.path.join(out_dir, "lenet_solver.prototxt")
    write_text_proto(path, solver)
    return path


def test_accuracy(net, batches):
    """The fraction of test images whose highest ip2 score is their label."""
    correct = total = 0
    for _ in range(batches):
        net.forward()
        predicted = net.blobs["ip2"].data.argmax(axis=1)
        labels = net.blobs["label"].data.astype(int)
        correct += int((predicted == labels).sum())
        total += len(labels)
    return correct / total


def train(solver, args):
    """The custom loop: returns the loss per iteration and {iteration: accuracy}."""
    test_net = solver.test_nets[0]
    losses = np.zeros(args.iterations)
    accuracies = {0: test_accuracy(test_net, args.test_batches)}
    print("%6s  %10s  %10s  %8s" % ("iter", "train loss", "test acc", "time"))
    print("%6d  %10s  %10.4f  %7.1fs" % (0, "-", accuracies[0], 0.0))
    start = time.time()
    for it in range(args.iterations):
        solver.step(1)  # forward, backward, update: one minibatch
        losses[it] = solver.net.blobs["loss"].data
        done = it + 1
        if done % args.test_interval == 0 or done == args.iterations:
            accuracies[done] = test_accuracy(test_net, args.test_batches)
            since = max(0, done - args.test_interval)
            print("%6d  %10.4f  %10.4f  %7.1fs" % (done, losses[since:done].mean(),
                                                   accuracies[done], time.time() - start))
    return losses, accuracies


def plot(path, losses, accuracies):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax_loss = plt.subplots(figsize=(7, 4))
    ax_acc = ax_loss.twinx()
    ax_loss.plot(np.arange(1, len(losses) + 1), losses, color="tab:blue", linewidth=0.8)
    iters = sorted(accuracies)
    ax_acc.plot(iters, [accuracies[i] for i in iters], "o-", color="tab:red")
    ax_loss.set_xlabel("iteration")
    ax_loss.set_ylabel("train loss", color="tab:blue")
    ax_acc.set_ylabel("test accuracy", color="tab:red")
    ax_acc.set_ylim(0, 1)
    ax_loss.set_title("LeNet on Fashion-MNIST: final test accuracy %.4f" % accuracies[iters[-1]])
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main():
    args = parse_args()
    if args.verbose:
        caffe.init_log(0)
    elif "GLOG_minloglevel" not in os.environ:
        caffe.init_log(1)
    for path, what in ((args.train_lmdb, "--train-lmdb"), (args.test_lmdb, "--test-lmdb")):
        if not os.path.isfile(os.path.join(path, "data.mdb")):
            sys.exit("learning_lenet.py: %s %s is not an LMDB. Make Fashion-MNIST's LMDBs with "
                     "data/fashion_mnist/create_fashion_mnist.sh, or pass another LMDB of 28x28 "
                     "grey Datums (e.g. data/fashion_mnist/fashion_test_lmdb for both)"
                     % (what, path))
    if args.iterations < 1 or args.test_interval < 1 or args.test_batches < 1:
        sys.exit("learning_lenet.py: --iterations, --test-interval and --test-batches "
                 "must be >= 1")

    out_dir = args.out_dir or tempfile.mkdtemp(prefix="learning_lenet_")
    os.makedirs(out_dir, exist_ok=True)
    try:
        caffe.set_mode_cpu()
        solver = caffe.get_solver(make_solver_files(args, out_dir))
        print("solver %s (%s)\ntrain  %s\ntest   %s\n"
              % (shown(args.solver), solver.type, shown(args.train_lmdb), shown(args.test_lmdb)))
        print("blobs of the training net:")
        for name, blob in solver.net.blobs.items():
            print("  %-8s %s" % (name, "x".join(str(d) for d in blob.data.shape) or "scalar"))
        print()
        losses, accuracies = train(solver, args)

        head = losses[:min(10, len(losses))].mean()
        tail = losses[-min(10, len(losses)):].mean()
        final = accuracies[max(accuracies)]
        print("\nloss: %.4f over the first 10 iterations, %.4f over the last 10" % (head, tail))
        tested = args.test_batches * solver.test_nets[0].blobs["label"].num
        print("test accuracy after %d iterations: %.4f (%d test images)"
              % (args.iterations, final, tested))

        test_net = solver.test_nets[0]
        test_net.forward()
        labels = test_net.blobs["label"].data[:8].astype(int)
        predicted = test_net.blobs["ip2"].data[:8].argmax(axis=1)
        print("one test batch, first 8: labels %s, predicted %s" % (labels.tolist(),
                                                                      predicted.tolist()))
        if args.plot:
            plot(args.plot, losses, accuracies)
            print("plot: %s" % args.plot)
        if args.out_dir:
            solver.snapshot()
            print("solver, net and snapshot (iteration %d) in %s: %s"
                  % (solver.iter, out_dir, " ".join(sorted(os.listdir(out_dir)))))
    finally:
        if not args.out_dir:
            shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
