#!/usr/bin/env bash
# `crema classify` of BVLC's trained LeNet (models/lenet/deploy.prototxt) on
# five Fashion-MNIST test images written as PNG. Checks: one line per image,
# top_k labels each with probabilities in [0,1] in descending order; each
# top-1 equals the argmax `crema test` computes for the same image (the
# images in an LMDB made by convert_imageset, BVLC's train_test net at batch
# 1 with an ArgMax output); a second run reading the images from a list file
# prints the same lines; and at least 4 of the 5 top-1s are the true labels.
# Then with --mean_file (compute_image_mean of the LMDB): each top-1 and its
# probability (to classify's 4 decimals) equal those of `crema test` with the
# same mean_file in the net's transform_param (the tool and the data layer
# share DataTransformer).
# Skipped where the BVLC files are missing (require_compat).
#   classify_lenet.sh CREMA CONVERT_IMAGESET SOURCE_DIR COMPAT_DIR COMPUTE_IMAGE_MEAN
set -euo pipefail
source "$(dirname "$0")/lib.sh"
crema=$(realpath "$1") convert_imageset=$(realpath "$2") source=$(realpath "$3")
compute_image_mean=$(realpath "$5")
require_compat "$4"
compat=$(realpath "$compat")
weights=$compat/lenet_fashion/lenet_fashion_iter_10000.caffemodel
raw=${CREMA_FASHION_MNIST_RAW:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d /tmp/crema_classify_XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
count=5 top_k=3

# The argmax `crema test` printed for each batch, one per line.
argmaxes() { grep -o 'Batch [0-9]*, argmax = [0-9]*' "$1" | awk '{print $NF}'; }
# Field k (1: the label, 2: its probability) of each classify line's top-1.
top1_field() {
  awk -v k="$1" '{ split($0, parts, ": "); split(parts[2], first, " "); print first[k] }' "$2"
}

# The first five test images as 28x28 grey PNGs, and their list with labels.
python3 - "$source/data/fashion_mnist" "$raw" "$work" "$count" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from make_png_folders import grey_png, read_idx
raw, work, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
(_, height, width), images = read_idx(os.path.join(raw, "t10k-images-idx3-ubyte.gz"), 2051)
_, labels = read_idx(os.path.join(raw, "t10k-labels-idx1-ubyte.gz"), 2049)
size = height * width
with open(os.path.join(work, "list.txt"), "w") as lst:
    for i in range(count):
        with open(os.path.join(work, f"image{i}.png"), "wb") as f:
            f.write(grey_png(images[i * size:(i + 1) * size], height, width))
        lst.write(f"image{i}.png {labels[i]}\n")
PY

# classify, the images given as a comma list (paths as written: image<i>.png).
images=$(cd "$work" && ls image*.png | sort | tr '\n' ',' | sed 's/,$//')
(cd "$work" && "$crema" classify --model="$source/models/lenet/deploy.prototxt" \
  --weights="$weights" --scale=0.00390625 --top_k=$top_k --images="$images" \
  >classify.out 2>classify.log) || { tail -20 "$work/classify.log"; exit 1; }
cat "$work/classify.out"
awk -v n=$count -v k=$top_k '
  { if (split($0, parts, ": ") != 2) { print "FAIL: line " NR " is not <path>: ..."; bad = 1; next }
    m = split(parts[2], entries, ", ")
    if (m != k) { print "FAIL: line " NR " has " m " labels, not " k; bad = 1 }
    previous = 2
    for (i = 1; i <= m; ++i) {
      split(entries[i], fields, " "); p = fields[2] + 0
      if (p < 0 || p > 1 || p > previous) { print "FAIL: line " NR ": probabilities not in [0,1] descending"; bad = 1 }
      previous = p
    } }
  END { if (NR != n) { print "FAIL: " NR " lines, not " n; bad = 1 }; exit bad }' "$work/classify.out"

# The same from a list file (Caffe's "path label" lines): the same output.
(cd "$work" && "$crema" classify --model="$source/models/lenet/deploy.prototxt" \
  --weights="$weights" --scale=0.00390625 --top_k=$top_k --images=list.txt \
  >classify_list.out 2>classify_list.log) || { tail -20 "$work/classify_list.log"; exit 1; }
cmp -s "$work/classify.out" "$work/classify_list.out" ||
  { echo "FAIL: --images=list.txt printed otherwise:"; cat "$work/classify_list.out"; exit 1; }

# The argmax of `crema test` on the same images: an LMDB of them, BVLC's net
# reading it at batch 1, with an ArgMax of ip2 as an extra output.
"$convert_imageset" --gray "$work/" "$work/list.txt" "$work/lmdb" >"$work/convert.log" 2>&1 ||
  { tail -20 "$work/convert.log"; exit 1; }
sed -e "s#FASHION_TEST_LMDB#$work/lmdb#" -e "s#batch_size: 100#batch_size: 1#" \
  "$compat/lenet_fashion/lenet_train_test.prototxt" >"$work/net.prototxt"
cat >>"$work/net.prototxt" <<'NET'
layer {
  name: "argmax"
  type: "ArgMax"
  bottom: "ip2"
  top: "argmax"
  include { phase: TEST }
}
NET
"$crema" test --model="$work/net.prototxt" --weights="$weights" --iterations=$count \
  >"$work/test.log" 2>&1 || { tail -20 "$work/test.log"; exit 1; }
argmaxes "$work/test.log" >"$work/argmax"
top1_field 1 "$work/classify.out" >"$work/top1"
echo "crema test argmax: $(tr '\n' ' ' <"$work/argmax")"
echo "classify top-1:    $(tr '\n' ' ' <"$work/top1")"
echo "true labels:       $(awk '{printf "%s ", $2}' "$work/list.txt")"
cmp -s "$work/argmax" "$work/top1" ||
  { echo "FAIL: classify's top-1 differs from crema test's argmax"; exit 1; }
correct=$(paste -d' ' "$work/top1" <(awk '{print $2}' "$work/list.txt") | awk '$1 == $2' | wc -l)
echo "top-1 correct: $correct of $count"
((correct >= count - 1)) || { echo "FAIL: fewer than $((count - 1)) of $count correct"; exit 1; }

# With the images' mean file: classify's top-1 and its probability against
# `crema test` of the same net, its transform_param given the mean file, with
# a Softmax of ip2 as an extra output.
"$compute_image_mean" "$work/lmdb" "$work/mean.binaryproto" >"$work/mean.log" 2>&1 ||
  { tail -20 "$work/mean.log"; exit 1; }
(cd "$work" && "$crema" classify --model="$source/models/lenet/deploy.prototxt" \
  --weights="$weights" --scale=0.00390625 --top_k=1 --images="$images" \
  --mean_file=mean.binaryproto >classify_mean.out 2>classify_mean.log) ||
  { tail -20 "$work/classify_mean.log"; exit 1; }
sed -e "s#scale: 0.00390625#scale: 0.00390625 mean_file: \"$work/mean.binaryproto\"#" \
  "$work/net.prototxt" >"$work/net_mean.prototxt"
cat >>"$work/net_mean.prototxt" <<'NET'
layer {
  name: "prob"
  type: "Softmax"
  bottom: "ip2"
  top: "prob"
  include { phase: TEST }
}
NET
"$crema" test --model="$work/net_mean.prototxt" --weights="$weights" --iterations=$count \
  >"$work/test_mean.log" 2>&1 || { tail -20 "$work/test_mean.log"; exit 1; }
argmaxes "$work/test_mean.log" >"$work/argmax_mean"
top1_field 1 "$work/classify_mean.out" >"$work/top1_mean"
echo "with the mean file: crema test argmax $(tr '\n' ' ' <"$work/argmax_mean"), classify top-1 $(tr '\n' ' ' <"$work/top1_mean")"
[[ -s "$work/argmax_mean" ]] && cmp -s "$work/argmax_mean" "$work/top1_mean" ||
  { echo "FAIL: with --mean_file, classify's top-1 differs from crema test's argmax"; exit 1; }
# The top-1's probability, as classify prints it (4 decimals), from the
# Softmax values `crema test` prints batch by batch, class by class.
grep -o 'Batch [0-9]*, prob = [-0-9.e+]*' "$work/test_mean.log" |
  awk -v top="$(tr '\n' ' ' <"$work/top1_mean")" '
    BEGIN { split(top, label, " ") }
    { batch = $2 + 1; if (batch != last) { k = 0; last = batch } else ++k
      if (k == label[batch]) printf "%.4f\n", $NF }' >"$work/prob_test"
top1_field 2 "$work/classify_mean.out" >"$work/prob_classify"
cmp -s "$work/prob_test" "$work/prob_classify" ||
  { echo "FAIL: with --mean_file, classify's top-1 probabilities $(tr '\n' ' ' <"$work/prob_classify")differ from crema test's $(tr '\n' ' ' <"$work/prob_test")"; exit 1; }
