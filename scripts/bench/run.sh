#!/usr/bin/env bash
# Runs Crema's micro-benchmarks (Google Benchmark) from a build directory.
set -euo pipefail
build_dir=${1:-build/release}
cd "$(dirname "$0")/../.."
for bench in "$build_dir"/bin/bench_*; do
  [[ -x "$bench" ]] || continue
  case $(basename "$bench") in
    bench_data_pipeline | bench_image_pipeline) continue ;;  # run by their scripts below
  esac
  echo "=== $(basename "$bench")"
  "$bench" --benchmark_min_time=0.2
done
./scripts/bench/data_pipeline.sh "$build_dir"
if [[ -x $build_dir/bin/convert_imageset ]]; then  # a build with OpenCV
  ./scripts/bench/image_pipeline.sh "$build_dir"
  ./scripts/bench/encoded_lmdb.sh "$build_dir"
fi
if compgen -G "$build_dir/python/crema/_crema*.so" >/dev/null; then  # a build with Python
  ./scripts/bench/python_step.sh "$build_dir"
fi
./scripts/bench/parallel.sh "$build_dir"
./scripts/bench/engines.sh "$build_dir"
./scripts/bench/gemm_engines.sh
