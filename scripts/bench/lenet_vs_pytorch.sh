#!/usr/bin/env bash
# Crema against PyTorch on the same LeNet training, and both against the
# machine's sgemm peak.
#
# What it measures: training images/s of models/lenet's LeNet on Fashion-MNIST,
# batch 64, ITERATIONS iterations, in three configurations run in alternation,
# ROUNDS rounds, median reported:
#   crema    `crema train --threads=2` (CREMA_NUM_THREADS=2) on the LMDB, with
#            the lenet solver made to train only (no tests, no snapshots);
#            images/s is the median of its display lines after the first (the
#            first includes warm-up); the run's wall time is shown too.
#   best     scripts/bench/lenet_pytorch.py 2: PyTorch 1.13 (Debian's
#            python3-torch), the same net, init and solver, images held in
#            memory, torch.set_num_threads(2), OMP_NUM_THREADS=2,
#            OPENBLAS_NUM_THREADS=1; timed after 50 warm-up iterations.
#   1 thread the same with 1 thread (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1).
# It also times OpenBLAS's cblas_sgemm and oneDNN's dnnl_sgemm
# (scripts/bench/sgemm_peak.c) with 1 and 2 threads: LeNet costs 13.18 MFLOP
# per image (forward + backward), so the higher 2-thread peak (the GEMM the
# machine can run fastest) gives Crema's achieved fraction and a bound on
# images/s. Crema's GEMMs run on oneDNN's in builds with oneDNN.
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/lenet_vs_pytorch.sh [BUILD_DIR]      (default build/release)
#   ITERATIONS=1000 ROUNDS=3 scripts/bench/lenet_vs_pytorch.sh build/release
# Environment knobs: ITERATIONS (default 1000) training iterations per run,
# ROUNDS (default 3) alternating rounds, BF16=1 (Crema with
# `compute_precision: BF16` joins the alternation as "Crema bf16"), BASELINE
# (a second build folder, e.g. of an earlier commit, whose `crema` joins the
# alternation as "baseline": a before/after in one run). Below 300 iterations Crema displays
# every ITERATIONS/4 iterations instead of every 100, so that it still prints
# at least two images/s lines (use such runs only to check the script).
# It builds only crema_tool and convert_mnist_data (configuring BUILD_DIR as
# Release if it has no CMakeCache.txt), makes the Fashion-MNIST LMDBs, and
# installs python3-torch with apt-get (sudo when not root) if /usr/bin/python3
# cannot import torch. Debian's /usr/bin/python3 is used explicitly: the PATH
# python3 may be a pyenv without Debian's packages. Needs libopenblas-dev and
# libdnnl-dev and a C compiler (cc). Run it on an otherwise idle machine: it measures 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${1:-build/release}
iterations=${ITERATIONS:-1000}
rounds=${ROUNDS:-3}
source scripts/bench/pytorch_setup.sh
mflop_per_image=13.18  # LeNet forward + backward, per 28x28 image

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool convert_mnist_data >/dev/null
data/fashion_mnist/create_fashion_mnist.sh "$build" >/dev/null
crema=$root/$build/bin/crema
baseline=${BASELINE:+$(cd "$BASELINE" && pwd)/bin/crema}

ensure_pytorch lenet_vs_pytorch

work=$(mktemp -d /tmp/crema_bench_lenet_pytorch_XXXXXX)
trap 'rm -rf "$work"' EXIT

# Crema's net and solver: models/lenet with absolute LMDB paths, training only.
display=100
((iterations >= 300)) || display=$(( iterations / 4 > 0 ? iterations / 4 : 1 ))
sed -e "s#\"data/fashion_mnist/#\"$root/data/fashion_mnist/#" \
    models/lenet/lenet_train_test.prototxt >"$work/net.prototxt"
sed -e "s#^net:.*#net: \"$work/net.prototxt\"#" -e "s#^max_iter:.*#max_iter: $iterations#" \
    -e 's#^test_interval:.*#test_interval: 100000000#' -e 's#^snapshot:.*#snapshot: 0#' \
    -e "s#^display:.*#display: $display#" -e "s#^snapshot_prefix:.*#snapshot_prefix: \"$work/s\"#" \
    models/lenet/lenet_solver.prototxt >"$work/solver.prototxt"
printf 'test_initialization: false\nsnapshot_after_train: false\nrandom_seed: 1\n' \
  >>"$work/solver.prototxt"
{ echo "compute_precision: BF16"; cat "$work/net.prototxt"; } >"$work/bf16_net.prototxt"
sed -e "s#^net:.*#net: \"$work/bf16_net.prototxt\"#" "$work/solver.prototxt" \
  >"$work/bf16_solver.prototxt"

# sgemm peak, once: the 1- and 2-thread GFLOP/s of OpenBLAS and of oneDNN on
# 1024^3 products; the bound takes the faster library's 2-thread peak.
cc -O2 -fopenmp -o "$work/sgemm_peak" scripts/bench/sgemm_peak.c -lopenblas -ldnnl
sgemm_line=$("$work/sgemm_peak")
echo "$sgemm_line"
peak2=$(grep -o '2 threads [0-9.]*' <<<"$sgemm_line" | awk '$3 > p {p = $3} END {print p}')
[[ -n $peak2 ]] || { echo "lenet_vs_pytorch: no 2-thread peak in '$sgemm_line'" >&2; exit 1; }

# The median of Crema's display lines' images/s after the first (warm-up).
rate() { grep -o '[0-9.e+]* images/s' "$1" | awk 'NR > 1 {print $1}' | median; }
now() { date +%s.%N; }
# lenet_pytorch.py THREADS with the thread environment of that setting.
pytorch() {
  local threads=$1 omp=$1 log=$work/pytorch$1.log
  OMP_NUM_THREADS=$omp OPENBLAS_NUM_THREADS=1 \
    "$python" scripts/bench/lenet_pytorch.py "$threads" "$iterations" >"$log" 2>&1 ||
    { cat "$log" >&2; return 1; }
  grep -q '^pytorch images/s: ' "$log" || { cat "$log" >&2; return 1; }
  sed -n 's/^pytorch images\/s: //p' "$log"
}

declare -A runs
for round in $(seq 1 "$rounds"); do
  start=$(now)
  CREMA_NUM_THREADS=2 "$crema" train --solver="$work/solver.prototxt" --threads=2 \
    >"$work/crema.log" 2>&1 || { tail -n 20 "$work/crema.log" >&2; exit 1; }
  wall=$(awk -v a="$start" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}')
  crema_rate=$(rate "$work/crema.log") ||
    { echo "lenet_vs_pytorch: fewer than 2 images/s lines in Crema's log" >&2; exit 1; }
  if [[ -n $baseline ]]; then
    CREMA_NUM_THREADS=2 "$baseline" train --solver="$work/solver.prototxt" --threads=2 \
      >"$work/baseline.log" 2>&1 || { tail -n 20 "$work/baseline.log" >&2; exit 1; }
    base_round=$(rate "$work/baseline.log")
    runs[baseline]+="$base_round "
  fi
  if [[ ${BF16:-0} == 1 ]]; then
    CREMA_NUM_THREADS=2 "$crema" train --solver="$work/bf16_solver.prototxt" --threads=2 \
      >"$work/bf16.log" 2>&1 || { tail -n 20 "$work/bf16.log" >&2; exit 1; }
    runs[bf16]+="$(rate "$work/bf16.log") "
  fi
  best=$(pytorch 2)
  one=$(pytorch 1)
  runs[crema]+="$crema_rate "
  runs[wall]+="$wall "
  runs[best]+="$best "
  runs[one]+="$one "
  [[ -z $baseline ]] || echo "round $round: baseline $base_round images/s"
  echo "round $round: Crema $crema_rate images/s (run wall time ${wall}s)," \
    "PyTorch 2 threads $best, PyTorch 1 thread $one images/s"
done

crema_rate=$(tr ' ' '\n' <<<"${runs[crema]}" | grep . | median)
wall=$(tr ' ' '\n' <<<"${runs[wall]}" | grep . | median)
best=$(tr ' ' '\n' <<<"${runs[best]}" | grep . | median)
one=$(tr ' ' '\n' <<<"${runs[one]}" | grep . | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
gflops=$(awk -v r="$crema_rate" -v f="$mflop_per_image" 'BEGIN {printf "%.2f", r * f * 1e-3}')
bound=$(awk -v p="$peak2" -v f="$mflop_per_image" 'BEGIN {printf "%.0f", p / (f * 1e-3)}')
fraction=$(ratio "$gflops" "$peak2")
echo "Crema achieves $gflops GFLOP/s at $mflop_per_image MFLOP per image (median wall time" \
  "of a Crema run ${wall}s)"
echo "LeNet, batch 64, $iterations iterations, median of $rounds alternating rounds (images/s):"
printf '  %-28s %s\n' "Crema (2 threads)" "$crema_rate"
printf '  %-28s %s   Crema/PyTorch-best = %s\n' "PyTorch best (2 threads)" "$best" \
  "$(ratio "$crema_rate" "$best")"
printf '  %-28s %s   Crema/PyTorch-1-thread = %s\n' "PyTorch (1 thread)" "$one" \
  "$(ratio "$crema_rate" "$one")"
echo "  fastest sgemm peak (2 threads) $peak2 GFLOP/s -> bound $bound images/s; Crema reaches" \
  "$fraction of it"
if [[ -n $baseline ]]; then
  base_rate=$(tr ' ' '\n' <<<"${runs[baseline]}" | grep . | median)
  printf '  %-28s %s   Crema/baseline = %s (rounds: %s)\n' "baseline (2 threads)" "$base_rate" \
    "$(ratio "$crema_rate" "$base_rate")" "${runs[baseline]% }"
  echo "  Crema's rounds: ${runs[crema]% }"
fi
if [[ ${BF16:-0} == 1 ]]; then
  bf16=$(tr ' ' '\n' <<<"${runs[bf16]}" | grep . | median)
  printf '  %-28s %s   bf16/PyTorch-best = %s, bf16/Crema = %s\n' "Crema bf16 (2 threads)" \
    "$bf16" "$(ratio "$bf16" "$best")" "$(ratio "$bf16" "$crema_rate")"
fi
