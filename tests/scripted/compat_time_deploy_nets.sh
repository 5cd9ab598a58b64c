#!/usr/bin/env bash
# Runs `crema time --iterations=1` (forward and backward) on every deploy-style
# BVLC net in ../shared/compat/bvlc, unchanged. Usage: compat_time_deploy_nets.sh CREMA SHARED_DIR
set -euo pipefail
crema=$1
bvlc=$2/compat/bvlc
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
passed=0
failed=0
for net in "${nets[@]}"; do
  if out=$("$crema" time --model="$bvlc/$net" --iterations=1 2>&1); then
    ms=$(grep -o 'Average Forward-Backward: [0-9.]* ms' <<<"$out" | grep -o '[0-9.]* ms')
    echo "ok   $net  forward-backward $ms"
    passed=$((passed + 1))
  else
    echo "FAIL $net"
    tail -5 <<<"$out"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
