#!/usr/bin/env bash
# Data pipeline benchmark: reader + prefetch throughput, and a LeNet training
# step fed from the Fashion-MNIST LMDB against the same step fed from memory.
#   scripts/bench/data_pipeline.sh [BUILD_DIR]
# Environment knobs: ITERATIONS (timed steps of each net per round, default
# 500, in alternating chunks of 5), ROUNDS (default 5), SHUFFLE=1 (the Data
# layers read with data_param.shuffle).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_data_pipeline convert_mnist_data >/dev/null
data/fashion_mnist/create_fashion_mnist.sh "$build"
"$build/bin/bench_data_pipeline" data/fashion_mnist/fashion_train_lmdb "${ITERATIONS:-500}" "${ROUNDS:-5}" \
  "$([[ ${SHUFFLE:-0} == 1 ]] && echo shuffle || echo in_order)"
