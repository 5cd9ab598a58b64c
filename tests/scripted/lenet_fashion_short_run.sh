#!/usr/bin/env bash
# The suite's short LeNet runs: builds the Fashion-MNIST LMDBs in a scratch
# folder, trains models/lenet for 2,000 iterations (fixed seed) and requires
# the test accuracy over the 10,000 test images to reach 0.87. One solver at
# batch 64, or with SOLVERS=2 two solver threads at batch 32 each.
#   lenet_fashion_short_run.sh CREMA CONVERT_MNIST_DATA REPO_ROOT [SOLVERS]
set -euo pipefail
crema=$1 convert=$2 root=$3 solvers=${4:-1}
batch=$((64 / solvers))
raw=/usr/share/datasets/fashion-mnist
work=$(mktemp -d /tmp/crema_lenet_short_XXXXXX)
trap 'rm -rf "$work"' EXIT
for split in train t10k; do
  GLOG_minloglevel=1 "$convert" --backend=lmdb "$raw/$split-images-idx3-ubyte.gz" \
    "$raw/$split-labels-idx1-ubyte.gz" "$work/$split"
done
sed -e "s#data/fashion_mnist/fashion_train_lmdb\" batch_size: 64#$work/train\" batch_size: $batch#" \
    -e "s#data/fashion_mnist/fashion_test_lmdb#$work/t10k#" \
    "$root/models/lenet/lenet_train_test.prototxt" >"$work/net.prototxt"
sed -e "s#^net:.*#net: \"$work/net.prototxt\"#" -e 's#^max_iter:.*#max_iter: 2000#' \
    -e 's#^test_interval:.*#test_interval: 2000#' -e 's#^snapshot:.*#snapshot: 0#' \
    -e "s#^snapshot_prefix:.*#snapshot_prefix: \"$work/lenet\"#" \
    "$root/models/lenet/lenet_solver.prototxt" >"$work/solver.prototxt"
printf 'random_seed: 1\ntest_initialization: false\nsnapshot_after_train: false\n' >>"$work/solver.prototxt"
start=$(date +%s)
"$crema" train --solver="$work/solver.prototxt" --solver_count="$solvers" >"$work/train.log" 2>&1 ||
  { tail -20 "$work/train.log"; exit 1; }
accuracy=$(grep -o 'Test net output #[0-9]*: accuracy = [0-9.]*' "$work/train.log" | tail -1 |
  awk '{print $NF}')
echo "LeNet, Fashion-MNIST, 2,000 iterations, $solvers solver(s) at batch $batch: test accuracy $accuracy ($(($(date +%s) - start)) s)"
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.87) }' ||
  { echo "FAIL: accuracy $accuracy < 0.87"; exit 1; }
