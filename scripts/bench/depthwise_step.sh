#!/usr/bin/env bash
# One training step of the MobileNets: depthwise convolutions on the
# reference body's loop over groups against oneDNN's depthwise kernels.
#
# What it measures: the milliseconds of one forward + backward pass computing
# every parameter gradient and every bottom gradient (force_backward: what a
# training step costs, without the solver's update), `crema time --threads=2
# --iterations=ITERATIONS` (the run's average), of
#   mobilenet_v1  models/mobilenet_v1/make_mobilenet_v1.py, batch 8 (depthwise
#                 as Convolution with group = channels);
#   mobilenet_v2  models/mobilenet_v2/make_mobilenet_v2.py, batch 8 (the
#                 forks' DepthwiseConvolution type);
# BatchNorm on stored statistics, under three engine settings in alternation,
# ROUNDS rounds (scripts/bench/set_engine.py):
#   caffe    every layer with an engine on CAFFE (the reference bodies);
#   before   DEFAULT, but the grouped convolutions on CAFFE: what engine
#            DEFAULT ran before it sent depthwise kernels to oneDNN;
#   default  DEFAULT.
# It prints each one's median and spread (min-max) over rounds, the ratios
# before / default and caffe / default, the step's arithmetic bound as
# big_nets_vs_pytorch.sh does (the GFLOP of its convolutions and inner
# products, scripts/bench/step_flops.py, over the 2-thread sgemm peak,
# scripts/bench/sgemm_peak.c) with each setting's fraction of it, and the
# milliseconds per layer type (forward + backward; "Depthwise" the depthwise
# convolutions) of the last round. A depthwise convolution does 9 multiply-
# adds per value it reads: it is bound by memory, not arithmetic, so these
# nets stay further from the bound than AlexNet or ResNet-50.
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/depthwise_step.sh [BUILD_DIR]      (default build/release)
# Environment knobs: ROUNDS (default 3), ITERATIONS (default 5), NETS
# (default "mobilenet_v1 mobilenet_v2"), BATCH (default 8). It builds
# crema_tool and the Python module (crema_python, for the FLOP count; configuring
# BUILD_DIR as Release if it has no CMakeCache.txt). Run it on an otherwise
# idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${ROUNDS:-3}
iterations=${ITERATIONS:-5}
nets=${NETS:-mobilenet_v1 mobilenet_v2}
batch=${BATCH:-8}
source scripts/bench/pytorch_setup.sh  # python, median

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool >/dev/null
crema=$PWD/$build/bin/crema

work=$(mktemp -d /tmp/crema_bench_depthwise_XXXXXX)
trap 'rm -rf "$work"' EXIT

peak2=
if cc -O2 -fopenmp -o "$work/sgemm_peak" scripts/bench/sgemm_peak.c -lopenblas -ldnnl \
    2>/dev/null; then
  sgemm_line=$("$work/sgemm_peak")
  echo "$sgemm_line"
  peak2=$(grep -o '2 threads [0-9.]*' <<<"$sgemm_line" | awk '$3 > p {p = $3} END {print p}')
fi
cmake --build "$build" -j"$(nproc)" --target crema_python >/dev/null 2>&1 || peak2=

settings=(caffe before default)
spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s-%s", lo, hi}'; }

for net in $nets; do
  "$python" "models/$net/make_$net.py" --batch "$batch" "$work/deploy.prototxt"
  { echo "force_backward: true"; cat "$work/deploy.prototxt"; } >"$work/net.prototxt"
  scripts/bench/set_engine.py "$work/net.prototxt" "$work/caffe.prototxt" CAFFE "$work/types"
  scripts/bench/set_engine.py --grouped=CAFFE "$work/net.prototxt" "$work/before.prototxt" DEFAULT \
    "$work/types"
  scripts/bench/set_engine.py "$work/net.prototxt" "$work/default.prototxt" DEFAULT "$work/types"
  declare -A runs=()
  for round in $(seq 1 "$rounds"); do
    for setting in "${settings[@]}"; do
      "$crema" time --model="$work/$setting.prototxt" --iterations="$iterations" --threads=2 \
        >"$work/$setting.log" 2>&1 || { tail -n 20 "$work/$setting.log" >&2; exit 1; }
      runs[$setting]+="$(sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' \
        "$work/$setting.log") "
    done
  done
  declare -A ms=()
  echo "$net (batch $batch): one training step, ms, median of $rounds alternating rounds"
  for setting in "${settings[@]}"; do
    # shellcheck disable=SC2086
    ms[$setting]=$(printf '%s\n' ${runs[$setting]} | median)
    # shellcheck disable=SC2086
    printf '  %-8s %8.1f   (%s)\n' "$setting" "${ms[$setting]}" "$(spread ${runs[$setting]})"
  done
  awk -v b="${ms[before]}" -v c="${ms[caffe]}" -v d="${ms[default]}" \
    'BEGIN { printf "  before / default: %.2f   caffe / default: %.2f\n", b / d, c / d }'
  if [[ -n $peak2 ]] && flops=$(GLOG_minloglevel=2 "$python" scripts/bench/step_flops.py \
      "$build" "$work/net.prototxt" 2>/dev/null | tail -n 1) && [[ $flops == forward* ]]; then
    awk -v f="${flops##* }" -v p="$peak2" -v c="${ms[caffe]}" -v b="${ms[before]}" \
      -v d="${ms[default]}" 'BEGIN {
      bound = 1000 * f / p
      printf "  arithmetic: %.2f GFLOP per step, %.1f ms at the 2-thread sgemm peak (%.1f GFLOP/s)\n",
             f, bound, p
      printf "  fraction of that peak: caffe %.3f, before %.3f, default %.3f\n",
             bound / c, bound / b, bound / d }'
  fi
  echo "  per layer type, last round (ms, forward + backward): caffe / before / default"
  for setting in "${settings[@]}"; do
    grep -E '\]\s+\S+\s+(forward|backward): ' "$work/$setting.log" | sed 's/.*\]  *//' |
      awk -v types="$work/types" -v setting="$setting" '
        BEGIN { while ((getline line < types) > 0) { split(line, f, " "); type[f[1]] = f[2] } }
        { t = type[$1]; if (t == "") t = ($1 ~ /_split$/) ? "Split" : "other"; sum[t] += $3 }
        END { for (t in sum) print t, setting, sum[t] }'
  done | awk '{ ms[$1, $2] = $3; seen[$1] = 1 }
    END { for (t in seen) printf "    %-14s %8.2f %8.2f %8.2f\n", t, ms[t, "caffe"], ms[t, "before"],
                                 ms[t, "default"] }' | sort -k4 -g -r
  unset runs ms
done
