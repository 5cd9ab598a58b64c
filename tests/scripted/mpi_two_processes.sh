#!/usr/bin/env bash
# Multi-process training: `mpirun -np 2 crema train` at batch B per process
# gives the weights of one process at batch 2B reading the same records (up to
# 1e-5 relative), and rank 0 alone logs and snapshots.
#   mpi_two_processes.sh CREMA CONVERT_MNIST_DATA COMPARE_CAFFEMODELS
set -euo pipefail
crema=$1 convert=$2 compare=$3
raw=/usr/share/datasets/fashion-mnist
work=$(mktemp -d /tmp/crema_mpi_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
GLOG_minloglevel=1 "$convert" --backend=lmdb "$raw/t10k-images-idx3-ubyte.gz" \
  "$raw/t10k-labels-idx1-ubyte.gz" "$work/db"
net() {  # batch
  cat <<NET
name: "mpi_lenet"
layer { name: "data" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.00390625 }
  data_param { source: "$work/db" batch_size: $1 backend: LMDB } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 8 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool1" top: "ip1"
  inner_product_param { num_output: 32 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
  inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
NET
}
solver() {  # name
  printf 'net: "%s.prototxt"\nbase_lr: 0.01\nmomentum: 0.9\nweight_decay: 0.0005\n' "$1"
  printf 'lr_policy: "inv"\ngamma: 0.0001\npower: 0.75\ndisplay: 10\nmax_iter: 50\n'
  printf 'snapshot: 0\nsnapshot_prefix: "%s"\nrandom_seed: 5\n' "$1"
}
net 16 >one.prototxt && solver one >one_solver.prototxt
net 8 >two.prototxt && solver two >two_solver.prototxt
"$crema" train --solver=one_solver.prototxt >one.log 2>&1 || { tail -5 one.log; exit 1; }
mpirun --allow-run-as-root --oversubscribe -np 2 "$crema" train --solver=two_solver.prototxt \
  >two.log 2>&1 || { tail -20 two.log; exit 1; }
grep -q "2 solvers (2 processes x 1 thread)" two.log ||
  { echo "FAIL: the run did not use 2 processes"; tail -20 two.log; exit 1; }
[[ $(grep -c "Snapshotting to binary proto file" two.log) -eq 1 ]] ||
  { echo "FAIL: not exactly one process snapshotted"; exit 1; }
echo -n "mpirun -np 2 at batch 8 vs 1 process at batch 16, 50 iterations: "
"$compare" two_iter_50.caffemodel one_iter_50.caffemodel 1e-5
