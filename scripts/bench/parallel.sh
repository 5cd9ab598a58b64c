#!/usr/bin/env bash
# Data-parallel benchmark: LeNet on Fashion-MNIST, 64 images per iteration,
# trained three ways in alternation (ROUNDS rounds, median reported):
#   one   1 solver  x 2 CPU threads (batch 64)
#   two   2 solver threads x 1 CPU thread each (batch 32 each)
#   mpi   mpirun -np 2, 1 solver x 1 CPU thread per process (batch 32 each)
# Training images/s is read from the display lines after the first one (warm-up).
#   scripts/bench/parallel.sh [BUILD_DIR]   (ITERATIONS=600 ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${1:-build/release}
iterations=${ITERATIONS:-600}
rounds=${ROUNDS:-3}
[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool convert_mnist_data >/dev/null
data/fashion_mnist/create_fashion_mnist.sh "$build" >/dev/null
crema=$root/$build/bin/crema
work=$(mktemp -d /tmp/crema_bench_parallel_XXXXXX)
trap 'rm -rf "$work"' EXIT

for batch in 64 32; do
  sed -e "s#data/fashion_mnist/fashion_train_lmdb\" batch_size: 64#$root/data/fashion_mnist/fashion_train_lmdb\" batch_size: $batch#" \
      -e "s#data/fashion_mnist/fashion_test_lmdb#$root/data/fashion_mnist/fashion_test_lmdb#" \
      models/lenet/lenet_train_test.prototxt >"$work/net$batch.prototxt"
  sed -e "s#^net:.*#net: \"$work/net$batch.prototxt\"#" -e "s#^max_iter:.*#max_iter: $iterations#" \
      -e 's#^test_interval:.*#test_interval: 1000000#' -e 's#^snapshot:.*#snapshot: 0#' \
      -e 's#^display:.*#display: 100#' -e "s#^snapshot_prefix:.*#snapshot_prefix: \"$work/s\"#" \
      models/lenet/lenet_solver.prototxt >"$work/solver$batch.prototxt"
  printf 'test_initialization: false\nsnapshot_after_train: false\nrandom_seed: 1\n' \
    >>"$work/solver$batch.prototxt"
done

# The median of the display lines' images/s after the first.
rate() { grep -o '[0-9.]* images/s' "$1" | awk 'NR > 1 {print $1}' | sort -g |
  awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

declare -A runs
for round in $(seq 1 "$rounds"); do
  "$crema" train --solver="$work/solver64.prototxt" --threads=2 >"$work/one.log" 2>&1
  one=$(rate "$work/one.log")
  "$crema" train --solver="$work/solver32.prototxt" --threads=2 --solver_count=2 \
    >"$work/two.log" 2>&1
  two=$(rate "$work/two.log")
  mpi=n/a
  if command -v mpirun >/dev/null && ldd "$crema" | grep -q libmpi; then
    mpirun --allow-run-as-root --oversubscribe -np 2 "$crema" train \
      --solver="$work/solver32.prototxt" --threads=1 >"$work/mpi.log" 2>&1
    mpi=$(rate "$work/mpi.log")
    runs[mpi]+="$mpi "
  fi
  runs[one]+="$one "
  runs[two]+="$two "
  echo "round $round: 1 solver $one, 2 solvers $two, mpirun -np 2 $mpi images/s"
done
one=$(tr ' ' '\n' <<<"${runs[one]}" | grep . | median)
two=$(tr ' ' '\n' <<<"${runs[two]}" | grep . | median)
echo "LeNet training, $iterations iterations of 64 images, median of $rounds rounds (images/s):"
echo "  1 solver x 2 threads:        $one"
echo "  2 solver threads x 1 thread: $two  (ratio to 1 solver: $(awk -v a="$two" -v b="$one" 'BEGIN {printf "%.3f", a / b}'))"
if [[ -n ${runs[mpi]:-} ]]; then
  mpi=$(tr ' ' '\n' <<<"${runs[mpi]}" | grep . | median)
  echo "  mpirun -np 2 x 1 thread:     $mpi  (ratio to 1 solver: $(awk -v a="$mpi" -v b="$one" 'BEGIN {printf "%.3f", a / b}'))"
fi
