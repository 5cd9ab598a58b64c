#!/usr/bin/env bash
# One training step of big nets, Crema against PyTorch doing the same work.
#
# What it measures: the milliseconds of one forward + backward pass computing
# every parameter gradient and every bottom gradient (force_backward: what a
# training step costs, without the solver's update), 2 threads, of
#   alexnet   AlexNet as BVLC's deploy net lays it out (models/alexnet/
#             make_alexnet.py), batch 10;
#   resnet50  ResNet-50 as published (models/resnet50/make_resnet50.py),
#             batch 8, batch normalisation on stored statistics;
# Crema: `crema time --threads=2 --iterations=ITERATIONS` on the deploy net
# with `force_backward: true` prepended (the run's average);
# PyTorch: scripts/bench/big_nets_pytorch.py (Debian's python3-torch 1.13 and
# python3-torchvision), the same layers, torch.set_num_threads(2),
# OMP_NUM_THREADS=2, OPENBLAS_NUM_THREADS=1 (the median of ITERATIONS steps).
# Crema and PyTorch alternate, ROUNDS rounds; it prints each one's median and
# the spread (min-max) over rounds, the ratio PyTorch / Crema, and Crema's
# milliseconds per layer type (forward + backward) in the last round.
# It also prints the step's arithmetic bound: the GFLOP of its convolution
# and inner-product products (scripts/bench/step_flops.py, with the Python
# module) over the machine's 2-thread sgemm peak (scripts/bench/sgemm_peak.c):
# about the shortest float step this machine can run (oneDNN's convolutions
# reach that peak, not beyond), and Crema's fraction of it.
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/big_nets_vs_pytorch.sh [BUILD_DIR]      (default build/release)
# Environment knobs: ROUNDS (default 3), ITERATIONS (default 5), NETS
# (default "alexnet resnet50"), BASELINE (a second build folder, e.g. of an
# earlier commit, whose `crema` joins the alternation as "baseline", with its
# own per-type times: a before/after in one run), BF16=1 (Crema with
# `compute_precision: BF16` joins the alternation as "bf16": convolutions in
# bf16 on CPUs with avx512_bf16), WINOGRAD=1 (Crema with
# `convolution_algorithm: WINOGRAD` joins as "winograd": 3x3 convolutions on
# oneDNN's Winograd on CPUs with AVX-512). It builds only crema_tool (configuring
# BUILD_DIR as Release if it has no CMakeCache.txt) and installs
# python3-torch and python3-torchvision with apt-get (sudo when not root) if
# /usr/bin/python3 cannot import them. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${ROUNDS:-3}
iterations=${ITERATIONS:-5}
nets=${NETS:-alexnet resnet50}
baseline=${BASELINE:+$(cd "$BASELINE" && pwd)/bin/crema}
source scripts/bench/pytorch_setup.sh  # python, ensure_pytorch, median

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool >/dev/null
crema=$PWD/$build/bin/crema
ensure_pytorch big_nets_vs_pytorch
if ! "$python" -c 'import torchvision' 2>/dev/null; then
  sudo=()
  [[ $EUID -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torchvision \
    >/dev/null
fi

work=$(mktemp -d /tmp/crema_bench_big_nets_XXXXXX)
trap 'rm -rf "$work"' EXIT

# The arithmetic bound needs the sgemm peak and the Python module (built
# here if the tree has the bindings); without either, it is left out.
peak2=
if cc -O2 -fopenmp -o "$work/sgemm_peak" scripts/bench/sgemm_peak.c -lopenblas -ldnnl \
    2>/dev/null; then
  sgemm_line=$("$work/sgemm_peak")
  echo "$sgemm_line"
  peak2=$(grep -o '2 threads [0-9.]*' <<<"$sgemm_line" | awk '$3 > p {p = $3} END {print p}')
fi
cmake --build "$build" -j"$(nproc)" --target _crema >/dev/null 2>&1 || peak2=

for net in $nets; do
  case $net in
    alexnet) batch=10
      "$python" models/alexnet/make_alexnet.py --batch "$batch" "$work/deploy.prototxt" ;;
    resnet50) batch=8
      "$python" models/resnet50/make_resnet50.py --batch "$batch" "$work/deploy.prototxt" ;;
    *) echo "big_nets_vs_pytorch.sh: unknown net $net" >&2; exit 2 ;;
  esac
  { echo "force_backward: true"; cat "$work/deploy.prototxt"; } >"$work/net.prototxt"
  { echo "compute_precision: BF16"; cat "$work/net.prototxt"; } >"$work/bf16.prototxt"
  { echo "convolution_algorithm: WINOGRAD"; cat "$work/net.prototxt"; } >"$work/winograd.prototxt"
  # "name type" per layer, for the per-type sums.
  awk '/^layer/ { inside = 1 } inside && /^  name:/ { gsub(/"/, "", $2); name = $2 }
       inside && /^  type:/ { gsub(/"/, "", $2); print name, $2; inside = 0 }' \
    "$work/net.prototxt" >"$work/types"
  crema_runs=() torch_runs=() baseline_runs=() bf16_runs=() winograd_runs=()
  # time_crema BINARY MODEL LOG: one `crema time` run; prints its average ms.
  time_crema() {
    "$1" time --model="$2" --iterations="$iterations" --threads=2 >"$3" 2>&1 ||
      { tail -n 20 "$3" >&2; exit 1; }
    sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' "$3"
  }
  for round in $(seq 1 "$rounds"); do
    crema_runs+=("$(time_crema "$crema" "$work/net.prototxt" "$work/crema.log")")
    [[ -z $baseline ]] ||
      baseline_runs+=("$(time_crema "$baseline" "$work/net.prototxt" "$work/baseline.log")")
    [[ ${BF16:-0} != 1 ]] ||
      bf16_runs+=("$(time_crema "$crema" "$work/bf16.prototxt" "$work/bf16.log")")
    [[ ${WINOGRAD:-0} != 1 ]] ||
      winograd_runs+=("$(time_crema "$crema" "$work/winograd.prototxt" "$work/winograd.log")")
    torch_runs+=("$(OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 "$python" \
      scripts/bench/big_nets_pytorch.py "$net" "$batch" 2 "$iterations" | awk '{print $3}')")
  done
  crema_ms=$(printf '%s\n' "${crema_runs[@]}" | median)
  torch_ms=$(printf '%s\n' "${torch_runs[@]}" | median)
  spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s-%s", lo, hi}'; }
  echo "$net (batch $batch): one training step, ms, median of $rounds alternating rounds"
  printf '  crema    %8.1f   (%s)\n' "$crema_ms" "$(spread "${crema_runs[@]}")"
  if [[ -n $baseline ]]; then
    baseline_ms=$(printf '%s\n' "${baseline_runs[@]}" | median)
    printf '  baseline %8.1f   (%s)\n' "$baseline_ms" "$(spread "${baseline_runs[@]}")"
    awk -v c="$crema_ms" -v b="$baseline_ms" 'BEGIN { printf "  baseline / crema: %.2f\n", b / c }'
  fi
  if ((${#bf16_runs[@]} > 0)); then
    bf16_ms=$(printf '%s\n' "${bf16_runs[@]}" | median)
    printf '  bf16     %8.1f   (%s)\n' "$bf16_ms" "$(spread "${bf16_runs[@]}")"
    awk -v c="$crema_ms" -v b="$bf16_ms" 'BEGIN { printf "  crema / bf16: %.2f\n", c / b }'
  fi
  if ((${#winograd_runs[@]} > 0)); then
    winograd_ms=$(printf '%s\n' "${winograd_runs[@]}" | median)
    printf '  winograd %8.1f   (%s)\n' "$winograd_ms" "$(spread "${winograd_runs[@]}")"
    awk -v c="$crema_ms" -v w="$winograd_ms" 'BEGIN { printf "  crema / winograd: %.2f\n", c / w }'
  fi
  printf '  pytorch  %8.1f   (%s)\n' "$torch_ms" "$(spread "${torch_runs[@]}")"
  awk -v c="$crema_ms" -v t="$torch_ms" 'BEGIN { printf "  pytorch / crema: %.2f\n", t / c }'
  if [[ -n $peak2 ]] && flops=$(GLOG_minloglevel=2 "$python" scripts/bench/step_flops.py \
      "$build" "$work/net.prototxt" 2>/dev/null | tail -n 1) && [[ $flops == forward* ]]; then
    awk -v f="${flops##* }" -v p="$peak2" -v c="$crema_ms" 'BEGIN {
      printf "  arithmetic: %.2f GFLOP per step, %.0f ms at the 2-thread sgemm peak (%.1f GFLOP/s);",
             f, 1000 * f / p, p
      printf " crema runs at %.2f of that peak\n", 1000 * f / p / c }'
  fi
  for who in crema baseline bf16 winograd; do
    [[ -f $work/$who.log ]] || continue
    echo "  $who per layer type, last round (ms): forward backward"
    grep -E '\]\s+\S+\s+(forward|backward): ' "$work/$who.log" | sed 's/.*\]  *//' |
    awk -v types="$work/types" '
      BEGIN { while ((getline line < types) > 0) { split(line, f, " "); type[f[1]] = f[2] } }
      { t = type[$1]; if (t == "") t = ($1 ~ /_split$/) ? "Split" : "other"
        if ($2 == "forward:") fwd[t] += $3; else bwd[t] += $3; seen[t] = 1 }
      END { for (t in seen) printf "    %-14s %8.2f %8.2f\n", t, fwd[t], bwd[t] }' | sort -k3 -g -r
  done
done
