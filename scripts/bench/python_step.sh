#!/usr/bin/env bash
# The Python API's training overhead (issue 16's goal: a Python loop of
# solver.step(1) at >= 0.97 of `crema train`'s images/s).
#
# What it measures: LeNet (models/lenet's net, batch 64, Fashion-MNIST LMDB,
# CPU) trained ITERATIONS iterations (default 1000) by `crema train` and by
# a Python loop `for _ in range(n): solver.step(1)` over the same solver file
# (no testing, no snapshot), alternating, ROUNDS rounds (default 5).
# Rate of a run: images/s over the iterations after the first 100 (start-up
# excluded): the tool's from its `Iteration N (x iter/s ...)` lines, the
# loop's from its own clock. Prints each round, the medians with min-max, and
# python/tool.
#   scripts/bench/python_step.sh [BUILD_DIR]      (default build/release)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${ROUNDS:-5}
iterations=${ITERATIONS:-1000}
source scripts/bench/pytorch_setup.sh  # median
source scripts/bench/lenet_training.sh  # write_lenet_bench_solver, log_images_per_second, print_median_with_range

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake "$build" -DCREMA_PYTHON=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool convert_mnist_data crema_python >/dev/null
data/fashion_mnist/create_fashion_mnist.sh "$build" >/dev/null

work=$(mktemp -d /tmp/crema_bench_python_step_XXXXXX)
trap 'rm -rf "$work"' EXIT
write_lenet_bench_solver "$work/solver.prototxt" models/lenet/lenet_train_test.prototxt "$iterations"

tool_rate() {
  "$build/bin/crema" train --solver="$work/solver.prototxt" >"$work/tool.log" 2>&1 ||
    { tail -n 20 "$work/tool.log" >&2; exit 1; }
  log_images_per_second "$work/tool.log" 64
}

python_rate() {
  PYTHONPATH="$PWD/$build/python" GLOG_minloglevel=1 /usr/bin/python3 - "$work/solver.prototxt" \
    "$iterations" <<'PY'
import sys, time
import crema
solver = crema.get_solver(sys.argv[1])
iterations = int(sys.argv[2])
for _ in range(100):
    solver.step(1)
start = time.perf_counter()
for _ in range(iterations - 100):
    solver.step(1)
print("%.1f" % (64 * (iterations - 100) / (time.perf_counter() - start)))
PY
}

declare -A runs
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  t=$(tool_rate)
  p=$(python_rate)
  runs[tool]+="$t "
  runs[python]+="$p "
  echo "round $round: tool $t python $p images/s  (load $(cut -d' ' -f1 /proc/loadavg))"
done
declare -A med
echo "LeNet training, batch 64, $iterations iterations, images/s, median (min-max) of $rounds alternating rounds:"
for kind in tool python; do
  read -r -a values <<<"${runs[$kind]}"
  print_median_with_range "$kind" "${values[@]}"
  med[$kind]=$median_rate
done
awk -v p="${med[python]}" -v t="${med[tool]}" \
  'BEGIN { printf "  python/tool: %.3f   (goal >= 0.97)\n", p / t }'
echo "  ($(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg))"
