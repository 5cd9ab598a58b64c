#!/usr/bin/env bash
# Runs Crema's micro-benchmarks (Google Benchmark) from a build directory.
set -euo pipefail
build_dir=${1:-build/release}
cd "$(dirname "$0")/../.."
for bench in "$build_dir"/bin/bench_*; do
  [[ -x "$bench" ]] || continue
  [[ $(basename "$bench") == bench_data_pipeline ]] && continue  # run by data_pipeline.sh
  echo "=== $(basename "$bench")"
  "$bench" --benchmark_min_time=0.2
done
./scripts/bench/data_pipeline.sh "$build_dir"
./scripts/bench/parallel.sh "$build_dir"
./scripts/bench/engines.sh "$build_dir"
./scripts/bench/gemm_engines.sh
