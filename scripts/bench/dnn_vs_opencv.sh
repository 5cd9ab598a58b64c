#!/usr/bin/env bash
# Inference: Crema's forward pass against OpenCV's dnn module (Caffe
# importer) and ONNX Runtime (the net exported by `crema export`) on the same
# nets and weights.
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
# Crema: crema.Net in TEST phase, engine DEFAULT, CREMA_NUM_THREADS=2, and
# OpenMP's wait policy as a Python program has it (unset: oneDNN's threads
# spin a while between primitives, as the `crema` tool keeps it for
# forward-only commands; the tool sets passive for training, where they
# would take the cores from Crema's kernel pool; CREMA_OMP_WAIT_POLICY sets
# it here); OpenCV: Debian's
# python3-opencv (4.6), cv2.setNumThreads(2), its own CPU backend; ONNX
# Runtime: the npm package onnxruntime-node (at ORT_NODE, by default where
# scripts/install_deps.sh --with-onnxruntime puts it, build/onnxruntime), 2 intra-op threads (scripts/bench/dnn_forward_ort.js), on
# the net `crema export` writes with the same weights; a net the export does
# not take (or without node and the package) gets "-" in that column. The
# frameworks alternate, ROUNDS rounds; it prints each one's median over
# rounds of the runs' medians, with the spread (min-max), and the ratios
# OpenCV / Crema and ONNX Runtime / Crema (above 1: Crema is faster); then
# the same table of the runs' fastest passes, the ones least disturbed by
# other load on a shared machine. For mobilenet_v1 it also runs, in the same
# rounds, oneDNN alone on the same shapes with nothing around it (every
# activation blocked, weights packed once, BatchNorm/Scale/ReLU folded;
# scripts/bench/mobilenet_onednn_bound.cpp), its threads sleeping between
# primitives (OMP_WAIT_POLICY=passive, as the crema tool's when it trains) and spinning (active):
# the fastest any framework could run that net on oneDNN's kernels here.
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/dnn_vs_opencv.sh [BUILD_DIR]      (default build/release)
# Environment knobs: ROUNDS (default 5), ITERATIONS (default 20), NETS
# (default "mobilenet_v1 mobilenet_ssd ssd_face"), BATCHES (default "1 8"),
# CREMA_OMP_WAIT_POLICY (default unset), WINOGRAD=1 (Crema's net asks for
# Winograd, `convolution_algorithm: WINOGRAD`, opt-in; the others read the
# net as written).
# It builds the tool and the Python module (configuring BUILD_DIR as Release with
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
cmake --build "$build" -j"$(nproc)" --target crema_tool crema_python >/dev/null
if ! "$python" -c 'import cv2' 2>/dev/null; then
  sudo=()
  [[ $EUID -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-opencv >/dev/null
fi

work=$(mktemp -d /tmp/crema_bench_opencv_XXXXXX)
trap 'rm -rf "$work"' EXIT
# Each run prints "median MS fastest MS"; its line goes to $work/FRAMEWORK.runs.
forward() {  # forward FRAMEWORK NET WEIGHTS
  local policy=()
  [[ -n ${CREMA_OMP_WAIT_POLICY:-} ]] && policy=(OMP_WAIT_POLICY="$CREMA_OMP_WAIT_POLICY")
  env "${policy[@]}" CREMA_NUM_THREADS=2 THREADS=2 GLOG_minloglevel=2 \
    "$python" scripts/bench/dnn_forward.py "$1" "$build" "$2" "$3" "$iterations" |
    awk '/^median/ {print $2, $4}' >>"$work/$1.runs"
}
bound_forward() {  # bound_forward BATCH WAIT_POLICY
  OMP_NUM_THREADS=2 OMP_WAIT_POLICY=$2 "$work/bound" "$1" "$iterations" |
    awk '/^median/ {print $2, $4}' >>"$work/bound_$2.runs"
}
ort_forward() {  # ort_forward NET.onnx
  THREADS=2 node scripts/bench/dnn_forward_ort.js "$1" "$iterations" |
    awk '/^median/ {print $2, $4}' >>"$work/ort.runs"
}
has_ort=0
# scripts/install_deps.sh --with-onnxruntime installs the package into build/onnxruntime.
export ORT_NODE=${ORT_NODE:-$PWD/build/onnxruntime/node_modules/onnxruntime-node}
command -v node >/dev/null && node -e "require(process.env.ORT_NODE)" 2>/dev/null && has_ort=1
# cell FRAMEWORK COLUMN: "median (min-max)" over the rounds of column 1 (the
# runs' medians) or 2 (their fastest passes), or "-".
cell() {
  [[ -s $work/$1.runs ]] || { echo "-"; return; }
  awk -v c="$2" '{print $c}' "$work/$1.runs" | median_spread
}
ratio() {  # ratio CELL CREMA_CELL: the first figures' quotient, or "-"
  awk -v a="${1%% *}" -v c="${2%% *}" 'BEGIN { if (a == "-") print "-"; else printf "%.2f", a / c }'
}

has_bound=0
g++ -O2 -std=c++17 scripts/bench/mobilenet_onednn_bound.cpp -ldnnl -o "$work/bound" 2>/dev/null &&
  has_bound=1

declare -a lines=() bound_lines=()
for net in $nets; do
  for batch in $batches; do
    "$python" "models/$net/make_$net.py" --batch "$batch" "$work/net.prototxt"
    GLOG_minloglevel=2 "$python" scripts/bench/dnn_forward.py weights "$build" \
      "$work/net.prototxt" "$work/net.caffemodel"
    ort=$has_ort
    ((ort)) && { "$build/bin/crema" export --model="$work/net.prototxt" \
      --weights="$work/net.caffemodel" --output="$work/net.onnx" >"$work/export.log" 2>&1 || ort=0; }
    crema_net=$work/net.prototxt
    if [[ ${WINOGRAD:-0} == 1 ]]; then
      crema_net=$work/net_winograd.prototxt
      { echo "convolution_algorithm: WINOGRAD"; cat "$work/net.prototxt"; } >"$crema_net"
    fi
    rm -f "$work"/*.runs
    for round in $(seq 1 "$rounds"); do
      forward crema "$crema_net" "$work/net.caffemodel"
      forward opencv "$work/net.prototxt" "$work/net.caffemodel"
      ((ort)) && ort_forward "$work/net.onnx"
      if ((has_bound)) && [[ $net == mobilenet_v1 ]]; then
        bound_forward "$batch" passive
        bound_forward "$batch" active
      fi
    done
    if [[ -s $work/bound_passive.runs ]]; then
      crema=$(cell crema 1) onnx=$(cell ort 1)
      passive=$(cell bound_passive 1) active=$(cell bound_active 1)
      bound_lines+=("$(printf '  %-14s %5d %24s %24s %8s %8s %8s' "$net" "$batch" "$passive" \
        "$active" "$(ratio "$crema" "$passive")" "$(ratio "$crema" "$active")" \
        "$(ratio "$onnx" "$active")")")
    fi
    for column in 1 2; do
      crema=$(cell crema $column) opencv=$(cell opencv $column) onnx=$(cell ort $column)
      lines+=("$column $(printf '  %-14s %5d %24s %24s %24s %8s %8s' "$net" "$batch" "$crema" \
        "$opencv" "$onnx" "$(ratio "$opencv" "$crema")" "$(ratio "$onnx" "$crema")")")
    done
  done
done
for column in 1 2; do
  ((column == 1)) && echo "forward pass, ms: median over $rounds alternating rounds (min-max) of" \
    "each run's median of $iterations passes; 2 threads; ratios: the other's ms / Crema's"
  ((column == 2)) && echo "the same with each run's fastest pass (the least disturbed by other load)"
  printf '  %-14s %5s %24s %24s %24s %8s %8s\n' net batch crema opencv onnxruntime opencv/ ort/
  for line in "${lines[@]}"; do [[ ${line%% *} == "$column" ]] && echo "${line#* }"; done
done
if ((${#bound_lines[@]})); then
  echo "oneDNN alone (mobilenet_onednn_bound.cpp), ms, median over the same rounds (min-max);"
  echo "  ratios: Crema's ms / the bound's (how far Crema is from it), ORT's / the active bound's"
  printf '  %-14s %5s %24s %24s %8s %8s %8s\n' net batch passive active crema/ crema/ ort/
  printf '  %-14s %5s %24s %24s %8s %8s %8s\n' "" "" "" "" passive active active
  for line in "${bound_lines[@]}"; do echo "$line"; done
fi
