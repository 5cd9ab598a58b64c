#!/usr/bin/env bash
# models/ssd_shapes/train_ssd_shapes.sh end to end, shortened to 30
# iterations, into a scratch folder: the shapes set, convert_annoset, the
# nets, crema train, crema test (mAP under three AP versions), the curve and
# crema detect all run and exit 0. (The full run, 4,000 iterations and its
# mAP, is measured by hand: docs/detection.md.)
#
#   ssd_shapes_pipeline.sh BUILD_DIR CHECKOUT
set -euo pipefail
build=$1
checkout=$2
scratch=$(mktemp -d /tmp/crema_ssd_shapes_XXXXXX)
trap 'rm -rf "$scratch"' EXIT
"$checkout/models/ssd_shapes/train_ssd_shapes.sh" "$build" 30 "$scratch" >"$scratch/run.log" 2>&1 ||
  { tail -n 30 "$scratch/run.log"; echo "FAILED: train_ssd_shapes.sh exited $?"; exit 1; }
fail() { echo "FAILED: $*"; tail -n 30 "$scratch/run.log"; exit 1; }
grep -q "Optimization Done" "$scratch/run.log" || fail "training did not finish"
[[ -f $scratch/model/ssd_shapes_iter_30.caffemodel ]] || fail "no final weights"
for version in 11point MaxIntegral Integral; do
  grep -Eq "^detection_eval = [0-9.e-]+ \(mAP, $version\)" "$scratch/model/ssd_shapes_test.txt" ||
    fail "crema test printed no $version mAP"
done
[[ -s $scratch/model/ssd_shapes_curve.png ]] || fail "no training curve"
[[ -s $scratch/model/detect/002000.png && -s $scratch/model/detect/002001.png ]] ||
  fail "crema detect drew no pictures"
echo "ssd_shapes pipeline: $(grep -c . "$scratch/model/ssd_shapes_test.txt") result lines;" \
  "$(grep 'mAP, Integral' "$scratch/model/ssd_shapes_test.txt")"
