#!/usr/bin/env bash
# `crema test` of BVLC Caffe's trained LeNet on BVLC's Fashion-MNIST test
# LMDB, 100 batches of 100: the accuracy must be BVLC's 0.9005 (± 0.0005).
# Skipped where the BVLC files are missing (require_compat).
#   compat_test_bvlc_lenet.sh CREMA COMPAT_DIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
crema=$1
require_compat "$2"
work=$(mktemp -d /tmp/crema_compat_test_XXXXXX)
trap 'rm -rf "$work"' EXIT
# The prototxt names its LMDBs by placeholders (see compat/README.md).
sed -e "s#FASHION_TEST_LMDB#$compat/fashion_test_lmdb#" \
  "$compat/lenet_fashion/lenet_train_test.prototxt" >"$work/net.prototxt"
"$crema" test --model="$work/net.prototxt" \
  --weights="$compat/lenet_fashion/lenet_fashion_iter_10000.caffemodel" --iterations=100 \
  >"$work/test.log" 2>&1 || { tail -20 "$work/test.log"; exit 1; }
accuracy=$(grep -o '] accuracy = [0-9.]*' "$work/test.log" | tail -1 | awk '{print $NF}')
loss=$(grep -o '] loss = [0-9.]*' "$work/test.log" | tail -1 | awk '{print $NF}')
echo "crema test, BVLC LeNet: accuracy $accuracy, loss $loss (BVLC: 0.9005, 0.304423)"
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.9 && a <= 0.901) }' ||
  { echo "FAIL: accuracy $accuracy is not 0.9005 +- 0.0005"; exit 1; }
