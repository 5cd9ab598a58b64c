#!/usr/bin/env bash
# SSD detection from the command line: `crema detect` with
# models/mobilenet_ssd and RANDOM weights on a picture of coloured shapes.
#
#   examples/detect/detect_cli.sh [CREMA] [OUT_DIR]
#     CREMA    the tool (default: build/release/bin/crema)
#     OUT_DIR  where everything is written (default: a temporary folder,
#              removed at exit)
#
# The weights here are the net's fillers' random values, written by `crema train` at max_iter 0
# (random_seed 1), so the boxes and labels mean nothing; the example shows the
# plumbing. The net's DetectionOutput keeps scores of 0.15 or more (its own
# 0.25 would keep almost nothing from random weights) and at most 8 boxes;
# the threshold is as low. Needs python3 with OpenCV (cv2) for the picture.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
crema=$(realpath "${1:-$repo/build/release/bin/crema}")
if [[ -n ${2:-} ]]; then
  mkdir -p "$2"
  out=$(realpath "$2")
else
  out=$(mktemp -d /tmp/crema_detect_XXXXXX)
  trap 'rm -rf "$out"' EXIT
fi
cd "$out"
python3=${PYTHON3:-/usr/bin/python3}

"$python3" "$here/make_picture.py" shapes.png
sed -e 's/confidence_threshold: 0.25/confidence_threshold: 0.15/' \
  -e 's/keep_top_k: 100/keep_top_k: 8/' \
  "$repo/models/mobilenet_ssd/mobilenet_ssd_deploy.prototxt" >mobilenet_ssd_deploy.prototxt
grep -q 'confidence_threshold: 0.15' mobilenet_ssd_deploy.prototxt ||
  { echo "models/mobilenet_ssd's DetectionOutput no longer has the threshold this rewrites"; exit 1; }
cat >random_weights_solver.prototxt <<'SOLVER'
net: "mobilenet_ssd_deploy.prototxt"
base_lr: 0 lr_policy: "fixed" max_iter: 0 display: 0
snapshot_prefix: "random" random_seed: 1
SOLVER
GLOG_minloglevel=1 "$crema" train --solver=random_weights_solver.prototxt
echo "weights: RANDOM ($out/random_iter_0.caffemodel): models/ssd_shapes/train_ssd_shapes.sh trains real ones"

# MobileNet-SSD's input: (BGR pixel - 127.5) * 0.007843.
GLOG_minloglevel=1 "$crema" detect --model=mobilenet_ssd_deploy.prototxt \
  --weights=random_iter_0.caffemodel --images=shapes.png --threshold=0.15 \
  --labelmap="$here/labelmap_voc.prototxt" --mean_value=127.5 --scale=0.007843 \
  --output_dir=drawn
echo "wrote $out/drawn/shapes.png"
