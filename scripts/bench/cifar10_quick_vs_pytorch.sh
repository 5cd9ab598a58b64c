#!/usr/bin/env bash
# Crema against PyTorch on one forward + backward pass of cifar10_quick.
#
# What it measures: the milliseconds of a forward + backward pass of
# models/cifar10_quick's training net on a batch of 100 3x32x32 images (this
# machine has no CIFAR-10 database: the Data layers are replaced by one Input
# layer of data and labels, zero-filled, which costs the dense layers the
# same), in alternation, ROUNDS rounds, median reported:
#   crema    `crema time --iterations=ITERATIONS` (2 threads)
#   pytorch  scripts/bench/cifar10_quick_pytorch.py 2: the same net in PyTorch
#            1.13 (Debian's python3-torch), torch.set_num_threads(2),
#            OMP_NUM_THREADS=2, OPENBLAS_NUM_THREADS=1, after 5 warm-up passes.
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/cifar10_quick_vs_pytorch.sh [BUILD_DIR]   (default build/release)
# Environment knobs: ITERATIONS (default 50) passes per run, ROUNDS (default 3).
# It builds only crema_tool (configuring BUILD_DIR as Release if it has no
# CMakeCache.txt) and installs python3-torch with apt-get (sudo when not root)
# if /usr/bin/python3 cannot import torch. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
iterations=${ITERATIONS:-50}
rounds=${ROUNDS:-3}
source scripts/bench/pytorch_setup.sh

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool >/dev/null
crema=$PWD/$build/bin/crema
ensure_pytorch cifar10_quick_vs_pytorch

work=$(mktemp -d /tmp/crema_bench_cifar10_quick_XXXXXX)
trap 'rm -rf "$work"' EXIT
# The training net with its two Data layers (TRAIN and TEST) replaced by one
# Input layer of the same tops and shapes.
awk '
  /^layer \{/ { block = $0; depth = 1; next_is_layer = 1 }
  next_is_layer && !/^layer \{/ { block = block "\n" $0; depth += gsub(/\{/, "{"); depth -= gsub(/\}/, "}") }
  next_is_layer && depth == 0 {
    if (block ~ /type: "Data"/) {
      if (!done) print "layer {\n  name: \"cifar\"\n  type: \"Input\"\n  top: \"data\"\n  top: \"label\"\n" \
        "  input_param { shape { dim: 100 dim: 3 dim: 32 dim: 32 } shape { dim: 100 } }\n}"
      done = 1
    } else print block
    next_is_layer = 0; next
  }
  !next_is_layer { print }
' models/cifar10_quick/cifar10_quick_train_test.prototxt >"$work/net.prototxt"

crema_runs=() pytorch_runs=()
for round in $(seq 1 "$rounds"); do
  CREMA_NUM_THREADS=2 "$crema" time --model="$work/net.prototxt" --iterations="$iterations" \
    --threads=2 >"$work/crema.log" 2>&1 || { tail -n 20 "$work/crema.log" >&2; exit 1; }
  crema_ms=$(sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' "$work/crema.log")
  [[ -n $crema_ms ]] || { tail -n 20 "$work/crema.log" >&2; exit 1; }
  OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 "$python" scripts/bench/cifar10_quick_pytorch.py 2 \
    "$iterations" >"$work/pytorch.log" 2>&1 || { cat "$work/pytorch.log" >&2; exit 1; }
  pytorch_ms=$(sed -n 's/^pytorch forward-backward ms: //p' "$work/pytorch.log")
  crema_runs+=("$crema_ms") pytorch_runs+=("$pytorch_ms")
  echo "round $round: Crema $crema_ms ms, PyTorch $pytorch_ms ms (forward + backward, batch 100)"
done
crema_ms=$(printf '%s\n' "${crema_runs[@]}" | median)
pytorch_ms=$(printf '%s\n' "${pytorch_runs[@]}" | median)
echo "cifar10_quick, batch 100, forward + backward, median of $rounds alternating rounds:"
printf '  %-20s %s ms\n' "Crema (2 threads)" "$crema_ms" "PyTorch (2 threads)" "$pytorch_ms"
awk -v c="$crema_ms" -v p="$pytorch_ms" 'BEGIN {printf "  PyTorch/Crema = %.3f (Crema is %.2fx as fast)\n", p / c, p / c}'
echo "  per layer (Crema, last round):"
grep -E '\]\s+\S+\s+(forward|backward): ' "$work/crema.log" | sed 's/.*\]  */    /'
