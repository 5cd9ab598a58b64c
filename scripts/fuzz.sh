#!/usr/bin/env bash
# Fuzzes Crema's loaders of user files for longer than CI does.
#   scripts/fuzz.sh [SECONDS] [RUNS] [NAME...]
# Builds the clang AddressSanitizer + UBSan tree with the libFuzzer harnesses
# (build/asan, as scripts/test.sh does) and runs each harness named (default:
# all of tests/fuzz/fuzz_*.cpp) until SECONDS (default 1800) or RUNS
# executions (default 1000000), whichever comes first. The corpora grow under
# build/asan/fuzz-long/<name>/; a crash, leak or UBSan report stops the run
# and leaves its input there. Each harness prints its last libFuzzer line
# (executions, cov:, ft:, corpus size).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
runs=${2:-1000000}
shift $(($# > 2 ? 2 : $#))
names=("$@")
if ((${#names[@]} == 0)); then
  for f in tests/fuzz/fuzz_*.cpp; do
    n=$(basename "$f" .cpp)
    [[ $n == fuzz_common ]] || names+=("${n#fuzz_}")
  done
fi
./scripts/install_deps.sh
CC=clang CXX=clang++ cmake -S . -B build/asan -DCREMA_CUDA=OFF -DCREMA_PYTHON=OFF \
  -DCREMA_SANITIZE=address -DCREMA_FUZZ=ON -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" \
  >build/asan.configure.log
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build build/asan -j"$(nproc)" --target "${targets[@]}"
status=0
for n in "${names[@]}"; do
  echo "=== fuzz_$n: up to $seconds s or $runs executions"
  tests/fuzz/run_fuzzer.sh fuzz "build/asan/bin/fuzz_$n" "$n" "$seconds" build/asan/fuzz-long \
    -runs="$runs" || status=1
done
exit $status
