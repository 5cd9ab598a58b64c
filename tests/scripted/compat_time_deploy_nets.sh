#!/usr/bin/env bash
# Runs `crema time --iterations=1` (forward and backward) on every deploy-style
# BVLC net in ../shared/compat/bvlc, unchanged, and checks that every layer was
# timed and that whole forward passes were timed alone; then on the two R-CNN
# deploy files of ../shared/realnets (an im_info input); skipped where the
# BVLC files are missing (require_compat).
#   compat_time_deploy_nets.sh CREMA COMPAT_DIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
crema=$1
require_compat "$2"
bvlc=$compat/bvlc
nets=(
  examples/mnist/lenet.prototxt
  examples/cifar10/cifar10_quick.prototxt
  examples/cifar10/cifar10_full.prototxt
  examples/siamese/mnist_siamese.prototxt
  examples/net_surgery/conv.prototxt
  examples/net_surgery/bvlc_caffenet_full_conv.prototxt
  models/bvlc_alexnet/deploy.prototxt
  models/bvlc_reference_caffenet/deploy.prototxt
  models/bvlc_googlenet/deploy.prototxt
  models/bvlc_reference_rcnn_ilsvrc13/deploy.prototxt
  models/finetune_flickr_style/deploy.prototxt
)
# The layer names of a prototxt: the first name in each layer block (V1
# "layers" blocks included).
layer_names() {  # NET_FILE
  awk '/^[[:space:]]*layers?[[:space:]]*\{/ { in_layer = 1 }
       in_layer && match($0, /name:[[:space:]]*"[^"]*"/) {
         name = substr($0, RSTART, RLENGTH); sub(/^name:[[:space:]]*"/, "", name); sub(/"$/, "", name)
         print name; in_layer = 0 }' "$1" | sort
}

# What a timing run must show: a forward and a backward time for every layer
# of the file (and only for those and the split layers the net inserts), each
# a finite number of ms, and a positive total.
check_timings() {  # NET_FILE LOG
  local expected forwards backwards missing extra
  expected=$(layer_names "$1")
  forwards=$(sed -n 's/.*\] *\([^ 	]*\)	forward: [0-9.e+-]* ms.*/\1/p' "$2" | sort)
  backwards=$(sed -n 's/.*\] *\([^ 	]*\)	backward: [0-9.e+-]* ms.*/\1/p' "$2" | sort)
  [[ $forwards == "$backwards" ]] || { echo "the forward and backward timings name other layers"; return 1; }
  missing=$(comm -23 <(echo "$expected") <(echo "$forwards") | tr '\n' ' ')
  [[ -z $missing ]] || { echo "layers not timed: $missing"; return 1; }
  extra=$(comm -13 <(echo "$expected") <(echo "$forwards") | grep -v '_split$' | tr '\n' ' ' || true)
  [[ -z $extra ]] || { echo "timed layers that are not in the file: $extra"; return 1; }
  if grep -qiE '(forward|backward): .*(nan|inf)' "$2"; then
    echo "a layer's time is not a number"
    return 1
  fi
  awk '/Average Forward-Backward:/ { total = $(NF - 1) } END { exit !(total > 0) }' "$2" ||
    { echo "no positive Average Forward-Backward time"; return 1; }
  awk '/Average Forward pass alone:/ { alone = $(NF - 1) } END { exit !(alone > 0) }' "$2" ||
    { echo "no positive Average Forward pass alone"; return 1; }
}

passed=0
failed=0
log=$(mktemp /tmp/crema_time_XXXXXX.log)
trap 'rm -f "$log"' EXIT
for net in "${nets[@]}"; do
  if "$crema" time --model="$bvlc/$net" --iterations=1 >"$log" 2>&1 &&
    problem=$(check_timings "$bvlc/$net" "$log"); then
    ms=$(grep -o 'Average Forward-Backward: [0-9.]* ms' "$log" | grep -o '[0-9.]* ms')
    echo "ok   $net  forward-backward $ms"
    passed=$((passed + 1))
  else
    echo "FAIL $net ${problem:-}"
    tail -5 "$log"
    failed=$((failed + 1))
  fi
  problem=""
done
# The R-CNN deploy files of ../shared/realnets, unchanged: their im_info
# input must hold the image's size (noise there is refused by Proposal).
for net in faster_rcnn_zf rfcn_resnet50; do
  file=$compat/../realnets/$net/deploy.prototxt
  if [[ -f $file ]] && "$crema" time --model="$file" --iterations=1 >"$log" 2>&1 &&
    awk '/Average Forward-Backward:/ { total = $(NF - 1) } END { exit !(total > 0) }' "$log"; then
    ms=$(grep -o 'Average Forward-Backward: [0-9.]* ms' "$log" | grep -o '[0-9.]* ms')
    echo "ok   realnets/$net  forward-backward $ms"
    passed=$((passed + 1))
  else
    echo "FAIL realnets/$net"
    [[ -f $file ]] || echo "$file is missing"
    tail -5 "$log"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
