#!/usr/bin/env bash
# Trains the ssd_shapes detector from nothing: writes the shapes data set
# (data/shapes/make_shapes.py), converts both splits to annotated LMDBs
# (convert_annoset), writes the nets (make_ssd_shapes.py), trains, tests the
# final weights (mAP at IoU 0.5 on the 300 test images), plots the training
# curve and runs crema detect on two test images.
#
#   models/ssd_shapes/train_ssd_shapes.sh [BUILD_DIR] [MAX_ITER] [WORK_DIR]
#
# BUILD_DIR holds bin/ (default build/release, what quickstart.sh builds;
# it needs OpenCV); MAX_ITER defaults to 4000. Without WORK_DIR everything
# goes under data/shapes/out (the data set and the LMDBs, rewritten each run)
# and models/ssd_shapes (the nets, the log, the weights,
# ssd_shapes_curve.png, detect/); with it, under WORK_DIR/data and
# WORK_DIR/model (the checkout is left alone). Needs python3-numpy,
# python3-opencv and python3-matplotlib (scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/release}/bin
max_iter=${2:-4000}
out=data/shapes/out
model=models/ssd_shapes
if [[ -n ${3:-} ]]; then
  out=$3/data
  model=$3/model
fi
[[ -x $bin/crema && -x $bin/convert_annoset ]] ||
  { echo "train_ssd_shapes.sh: no crema and convert_annoset in $bin (build first)" >&2; exit 1; }
start=$(date +%s)
rm -rf "$out"
/usr/bin/python3 data/shapes/make_shapes.py "$out"
for split in trainval test; do
  "$bin/convert_annoset" --anno_type=detection --label_map_file="$out/labelmap.prototxt" \
    --encoded --encode_type=jpg "$out/" "$out/$split.txt" "$out/${split}_lmdb" 2>&1 | tail -n 1
done
python3 models/ssd_shapes/make_ssd_shapes.py --data "$out" --max-iter "$max_iter" "$model"
log=$model/ssd_shapes_train.log
train_start=$(date +%s)
"$bin/crema" train --solver="$model/ssd_shapes_solver.prototxt" 2>&1 | tee "$log"
train_seconds=$(($(date +%s) - train_start))
weights=$model/ssd_shapes_iter_$max_iter.caffemodel
"$bin/crema" test --model="$model/ssd_shapes_test.prototxt" --weights="$weights" \
  --iterations=6 2>&1 | grep -E 'mAP|AP ' | sed 's/^.*\] //' | tee "$model/ssd_shapes_test.txt"
python3 scripts/parse_log.py "$log" >/dev/null
/usr/bin/python3 scripts/plot_training_log.py "$log" "$model/ssd_shapes_curve.png"
"$bin/crema" detect --model="$model/ssd_shapes_deploy.prototxt" --weights="$weights" \
  --images="$out/JPEGImages/002000.jpg,$out/JPEGImages/002001.jpg" --threshold=0.5 \
  --labelmap="$out/labelmap.prototxt" --mean_value=104,117,123 --output_dir="$model/detect"
echo "train_ssd_shapes.sh: trained $max_iter iterations in $train_seconds s;" \
  "weights $weights; curve $model/ssd_shapes_curve.png; drawings in $model/detect/;" \
  "all in $(($(date +%s) - start)) s"
