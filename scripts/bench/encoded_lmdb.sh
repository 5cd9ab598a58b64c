#!/usr/bin/env bash
# LeNet training fed from the encoded-PNG Fashion-MNIST LMDB against the same
# training fed from the plain (raw-pixel) LMDB (issue 15's goal: the encoded
# one at >= 0.9 of the plain one's images/s).
#
# What it measures: `crema train` of models/lenet's net (batch 64, CPU) for
# ITERATIONS iterations (default 1000), no testing, no snapshot, once per
# database per round, alternating, ROUNDS rounds (default 5). A run's rate is
# the mean of its `Iteration N (x iter/s ...)` lines after the first (start-up
# excluded) times the batch size. The encoded run decodes every PNG (28x28
# grey) on the Data layer's prefetch thread, beside the solver's threads.
# It prints each round, the medians with their min-max, and encoded/plain.
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/encoded_lmdb.sh [BUILD_DIR]      (default build/release)
# It builds crema, convert_mnist_data and convert_imageset, and makes the two
# LMDBs if missing (data/fashion_mnist/create_fashion_mnist.sh and
# create_fashion_png_lmdb.sh). Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${ROUNDS:-5}
iterations=${ITERATIONS:-1000}
source scripts/bench/pytorch_setup.sh  # median
source scripts/bench/lenet_training.sh  # write_lenet_bench_solver, log_images_per_second, print_median_with_range

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema convert_mnist_data convert_imageset >/dev/null
data/fashion_mnist/create_fashion_mnist.sh "$build" >/dev/null
data/fashion_mnist/create_fashion_png_lmdb.sh "$build" >/dev/null

work=$(mktemp -d /tmp/crema_bench_encoded_lmdb_XXXXXX)
trap 'rm -rf "$work"' EXIT
write_lenet_bench_solver "$work/plain_solver.prototxt" models/lenet/lenet_train_test.prototxt \
  "$iterations"
write_lenet_bench_solver "$work/encoded_solver.prototxt" \
  models/lenet_images/lenet_train_test_encoded_lmdb.prototxt "$iterations"

# Images/s of one training run over the named database.
rate() {
  "$build/bin/crema" train --solver="$work/$1_solver.prototxt" >"$work/run.log" 2>&1 ||
    { tail -n 20 "$work/run.log" >&2; exit 1; }
  log_images_per_second "$work/run.log" 64
}

declare -A runs
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  line="round $round:"
  for db in plain encoded; do
    r=$(rate "$db")
    [[ -n $r ]] || { echo "encoded_lmdb: no iteration lines in the $db run's log" >&2; exit 1; }
    runs[$db]+="$r "
    line+=" $db $r"
  done
  echo "$line images/s  (load $(cut -d' ' -f1 /proc/loadavg))"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A med
echo "LeNet training, batch 64, $iterations iterations, images/s, median (min-max) of $rounds alternating rounds:"
for db in plain encoded; do
  read -r -a values <<<"${runs[$db]}"
  print_median_with_range "$db" "${values[@]}"
  med[$db]=$median_rate
done
awk -v e="${med[encoded]}" -v p="${med[plain]}" \
  'BEGIN { printf "  encoded/plain: %.3f   (goal >= 0.9)\n", e / p }'
echo "  ($(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg))"
