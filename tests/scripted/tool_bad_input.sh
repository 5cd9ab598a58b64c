#!/usr/bin/env bash
# Bad input as a user gives it to the crema tool: each case must exit with
# status 1 and one error line that names the file or layer and says what was
# expected — no abort, no glog "Check failed", no stack trace, no signal.
#   tool_bad_input.sh CREMA CONVERT_MNIST_DATA SOURCE_DIR
set -uo pipefail
source "$(dirname "$0")/lib.sh"
crema=$(realpath "$1") convert=$(realpath "$2") source=$(realpath "$3")
work=$(mktemp -d /tmp/crema_bad_input_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

# CASE NAME, EXPECTED TEXT, then the crema arguments.
expect_error() {
  local name=$1 expected=$2
  shift 2
  "$crema" "$@" >out.log 2>&1
  local status=$?
  if ((status != 1)); then
    echo "FAIL $name: exit status $status (expected 1)"
  elif grep -qE 'Check failed|\*\*\* |terminate called|Aborted|Segmentation' out.log; then
    echo "FAIL $name: aborted instead of an error line"
  elif ! grep -qF -- "$expected" out.log; then
    echo "FAIL $name: the error does not say '$expected'"
  else
    echo "ok   $name: $(grep -F -- "$expected" out.log | head -1 | sed 's/^.*\] //')"
    return 0
  fi
  tail -5 out.log
  failures=$((failures + 1))
}

# The net, its data and weights from one training iteration: the inputs the
# cases below spoil one at a time.
make_test_lmdb "$convert" "$work/test_lmdb"
lenet_net "$source" "$work/test_lmdb" net.prototxt
printf 'net: "net.prototxt"\nbase_lr: 0.01\nlr_policy: "fixed"\nmax_iter: 1\nsnapshot_prefix: "lenet"\nrandom_seed: 1\n' \
  >good_solver.prototxt
"$crema" train --solver=good_solver.prototxt >good_train.log 2>&1 ||
  { echo "FAIL: training the weights the cases use"; tail -5 good_train.log; exit 1; }
weights=$work/lenet_iter_1.caffemodel

: >empty.prototxt
expect_error "empty net file" "has no layers" test --model=empty.prototxt --weights="$weights"

: >empty.caffemodel
expect_error "empty weights file" "empty.caffemodel: holds no layers" \
  test --model=net.prototxt --weights=empty.caffemodel

sed -e 's/name: "\(conv1\|conv2\|ip1\|ip2\)"/name: "other_\1"/' net.prototxt >renamed.prototxt
expect_error "weights sharing no layer" "shares no layer name" \
  test --model=renamed.prototxt --weights="$weights" --iterations=1

expect_error "zero iterations" "--iterations must be positive" \
  test --model=net.prototxt --weights="$weights" --iterations=0

cat >two_producers.prototxt <<'NET'
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 4 } } }
layer { name: "a" type: "ReLU" bottom: "x" top: "y" }
layer { name: "b" type: "TanH" bottom: "x" top: "y" }
NET
expect_error "two producers of one top" "produced by both layer 'a' and layer 'b'" \
  time --model=two_producers.prototxt --iterations=1

cat >unshaped.prototxt <<'NET'
layer { name: "in" type: "Input" top: "x" }
layer { name: "a" type: "ReLU" bottom: "x" top: "y" }
NET
expect_error "input without a shape" "input blob 'x' has no shape" \
  time --model=unshaped.prototxt --iterations=1

printf 'net: "net.prototxt"\nbase_lr: 0.01\nlr_policy: "fixed"\nmax_iter: 10\ntest_interval: 5\n' \
  >no_test_iter.prototxt
expect_error "test_interval without test_iter" "test_iter is not given" \
  train --solver=no_test_iter.prototxt

cat >huge.prototxt <<'NET'
layer { name: "in" type: "Input" top: "x"
        input_param { shape { dim: 100000 dim: 100000 dim: 100000 } } }
layer { name: "a" type: "ReLU" bottom: "x" top: "y" }
NET
expect_error "a blob too large" "layer 'in'" time --model=huge.prototxt --iterations=1

mkdir truncated_lmdb
cp "$work/test_lmdb/data.mdb" truncated_lmdb/
truncate -s 65536 truncated_lmdb/data.mdb
sed -e "s#$work/test_lmdb#$work/truncated_lmdb#" net.prototxt >truncated.prototxt
expect_error "truncated LMDB" "truncated_lmdb" \
  test --model=truncated.prototxt --weights="$weights" --iterations=2

# Sizes and counts from the command line are bounded before they are used.
expect_error "a device as the net file" "/dev/zero: not a regular file" \
  time --model=/dev/zero --iterations=1
head -c 300 net.prototxt >big.prototxt
export CREMA_MAX_TEXT_FILE_BYTES=100
expect_error "a net file over the text limit" "above the limit of 100 bytes" \
  time --model=big.prototxt --iterations=1
unset CREMA_MAX_TEXT_FILE_BYTES
expect_error "threads beyond the machine" "--threads is 100000; it must be between 1 and" \
  time --model=net.prototxt --iterations=1 --threads=100000
expect_error "negative threads" "--threads is -3" time --model=net.prototxt --iterations=1 --threads=-3
expect_error "solver threads beyond the machine" "--solver_count is 100000" \
  train --solver=good_solver.prototxt --solver_count=100000

printf 'net: "net.prototxt"\nbase_lr: 0.01\nlr_policy: "fixed"\nmax_iter: 2\nsnapshot: 1\nsnapshot_prefix: "missing/folder/lenet"\n' \
  >missing_folder_solver.prototxt
expect_error "a snapshot folder that does not exist" "the folder 'missing/folder' does not exist" \
  train --solver=missing_folder_solver.prototxt

# Numeric flags out of range or not finite.
expect_error "a device id with a tail" "--gpu: '0x' is not a device id" \
  time --model=net.prototxt --iterations=1 --gpu=0x
"$crema" help >help.txt 2>&1
if grep -qx '  classify' help.txt; then
  for scale in nan inf 1e39 0 -2; do
    expect_error "classify --scale=$scale" "--scale must be a positive finite number, got" \
      classify --model=net.prototxt --weights="$weights" --images=any.png --scale=$scale
  done
fi

# Numbers watched: NaN in the data stops the run at iteration 0 naming the
# data layer, and no snapshot of NaN weights is written.
cat >nan_data.prototxt <<'NET'
layer { name: "data" type: "DummyData" top: "data" top: "label"
        dummy_data_param { shape { dim: 2 dim: 3 } shape { dim: 2 }
                           data_filler { type: "constant" value: nan }
                           data_filler { type: "constant" value: 0 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
NET
printf 'net: "nan_data.prototxt"\nbase_lr: 0.01\nlr_policy: "fixed"\nmax_iter: 5\nsnapshot_prefix: "nan"\n' \
  >nan_solver.prototxt
expect_error "NaN in the data" "iteration 0: the loss is nan; the input layer 'data' (DummyData) gives non-finite values in 'data'" \
  train --solver=nan_solver.prototxt
[[ ! -e nan_iter_0.caffemodel && ! -e nan_iter_5.caffemodel ]] ||
  { echo "FAIL NaN in the data: a snapshot was written"; failures=$((failures + 1)); }

sed -e '/SoftmaxWithLoss/d' nan_data.prototxt >no_loss.prototxt
printf 'net: "no_loss.prototxt"\nbase_lr: 0.01\nlr_policy: "fixed"\nmax_iter: 5\n' >no_loss_solver.prototxt
expect_error "a training net without a loss" "no_loss.prototxt: the training net has no loss" \
  train --solver=no_loss_solver.prototxt

((failures == 0)) || { echo "$failures case(s) failed"; exit 1; }
