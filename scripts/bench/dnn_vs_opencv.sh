#!/usr/bin/env bash
# Inference: Crema's forward pass against OpenCV's dnn module (Caffe
# importer) on the same nets and weights.
#
# What it measures: the milliseconds of one forward pass, 2 threads, of
#   mobilenet_v1  models/mobilenet_v1/make_mobilenet_v1.py (depthwise as
#                 Convolution with group = channels, as OpenCV reads it;
#                 BatchNorm + Scale after each convolution), 224x224;
#   mobilenet_ssd models/mobilenet_ssd/make_mobilenet_ssd.py, 300x300;
#   ssd_face      models/ssd_face/make_ssd_face.py, 300x300;
# at batch 1 and batch 8, with the same random weights (Crema's fillers,
# BatchNorm's stored mean 0 and variance 1, written as a .caffemodel by
# Crema's Python module) and the same Gaussian-noise input, from Python
# (scripts/bench/dnn_forward.py): each run loads the net, runs three
# untimed passes and ITERATIONS timed ones, and gives their median.
# Crema: crema.Net in TEST phase, engine DEFAULT, CREMA_NUM_THREADS=2 and
# OMP_WAIT_POLICY=passive (as the `crema` tool sets it); OpenCV: Debian's
# python3-opencv (4.6), cv2.setNumThreads(2), its own CPU backend. The two
# alternate, ROUNDS rounds; it prints each one's median over rounds with
# the spread (min-max) and the ratio OpenCV / Crema (above 1: Crema is
# faster).
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/dnn_vs_opencv.sh [BUILD_DIR]      (default build/release)
# Environment knobs: ROUNDS (default 5), ITERATIONS (default 20), NETS
# (default "mobilenet_v1 mobilenet_ssd ssd_face"), BATCHES (default "1 8").
# It builds the Python module (configuring BUILD_DIR as Release with
# CREMA_PYTHON=ON if it has no CMakeCache.txt) and installs python3-opencv
# with apt-get (sudo when not root) if /usr/bin/python3 cannot import cv2.
# Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${ROUNDS:-5}
iterations=${ITERATIONS:-20}
nets=${NETS:-mobilenet_v1 mobilenet_ssd ssd_face}
batches=${BATCHES:-1 8}
source scripts/bench/pytorch_setup.sh  # python, median

[[ -f $build/CMakeCache.txt ]] ||
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCREMA_PYTHON=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_python >/dev/null
if ! "$python" -c 'import cv2' 2>/dev/null; then
  sudo=()
  [[ $EUID -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-opencv >/dev/null
fi

work=$(mktemp -d /tmp/crema_bench_opencv_XXXXXX)
trap 'rm -rf "$work"' EXIT
forward() {  # forward FRAMEWORK NET WEIGHTS: prints the run's median ms
  CREMA_NUM_THREADS=2 OMP_WAIT_POLICY=passive THREADS=2 GLOG_minloglevel=2 \
    "$python" scripts/bench/dnn_forward.py "$1" "$build" "$2" "$3" "$iterations" |
    awk '/^median/ {print $2}'
}
spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s-%s", lo, hi}'; }

echo "forward pass, ms, median of $rounds alternating rounds (min-max); 2 threads"
printf '  %-14s %5s %22s %22s %14s\n' net batch crema opencv opencv/crema
for net in $nets; do
  for batch in $batches; do
    "$python" "models/$net/make_$net.py" --batch "$batch" "$work/net.prototxt"
    GLOG_minloglevel=2 "$python" scripts/bench/dnn_forward.py weights "$build" \
      "$work/net.prototxt" "$work/net.caffemodel"
    crema_runs=() opencv_runs=()
    for round in $(seq 1 "$rounds"); do
      crema_runs+=("$(forward crema "$work/net.prototxt" "$work/net.caffemodel")")
      opencv_runs+=("$(forward opencv "$work/net.prototxt" "$work/net.caffemodel")")
    done
    crema_ms=$(printf '%s\n' "${crema_runs[@]}" | median)
    opencv_ms=$(printf '%s\n' "${opencv_runs[@]}" | median)
    printf '  %-14s %5d %8.2f (%11s) %8.2f (%11s) %14.2f\n' "$net" "$batch" "$crema_ms" \
      "$(spread "${crema_runs[@]}")" "$opencv_ms" "$(spread "${opencv_runs[@]}")" \
      "$(awk -v c="$crema_ms" -v o="$opencv_ms" 'BEGIN { print o / c }')"
  done
done
