#!/usr/bin/env bash
# A new machine to a trained model in one command: installs the dependencies,
# builds what the main job runs (the library and the tools, Release, no tests;
# the CUDA backend only where a CUDA device answers, or with CREMA_CUDA=ON in
# the environment), writes the Fashion-MNIST LMDBs, trains LeNet (models/lenet,
# 10,000 iterations), prints the final test accuracy and where the weights
# are, and plots the training curve.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
./scripts/install_deps.sh
cmake_args=()
[[ -n ${CREMA_CUDA:-} ]] && cmake_args+=(-DCREMA_CUDA="$CREMA_CUDA")
[[ -n ${CREMA_CUDA_ARCH:-} ]] && cmake_args+=(-DCREMA_CUDA_ARCH="$CREMA_CUDA_ARCH")
# The main job needs no Python package; CREMA_PYTHON=ON builds it too.
cmake_args+=(-DCREMA_PYTHON="${CREMA_PYTHON:-OFF}")
mkdir -p build
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCREMA_BUILD_TESTS=OFF "${cmake_args[@]}" \
  >build/release.configure.log 2>&1 || { cat build/release.configure.log; exit 1; }
grep '^-- Crema' build/release.configure.log
cmake --build build/release -j"$(nproc)"
echo "quickstart: built build/release in $(($(date +%s) - start)) s (dependencies included)"
./build/release/bin/crema device_query
data/fashion_mnist/create_fashion_mnist.sh build/release

log=models/lenet/lenet_fashion_train.log
echo "quickstart: training LeNet on Fashion-MNIST; the log goes to $log"
./build/release/bin/crema train --solver=models/lenet/lenet_solver.prototxt \
  --metrics="$log.metrics.jsonl" 2>&1 | tee "$log"

accuracy=$(grep 'Test net output #0: accuracy' "$log" | tail -1 | sed 's/.*accuracy = //')
echo
echo "quickstart: final test accuracy ${accuracy}"
echo "quickstart: weights in models/lenet/lenet_fashion_iter_10000.caffemodel"
python3 scripts/parse_log.py "$log" >/dev/null
if /usr/bin/python3 scripts/plot_training_log.py "$log" models/lenet/lenet_fashion_curve.png; then
  echo "quickstart: training curve in models/lenet/lenet_fashion_curve.png" \
       "(CSV: $log.train, $log.test; JSON Lines: $log.metrics.jsonl)"
fi
echo "quickstart: done in $(($(date +%s) - start)) s"
