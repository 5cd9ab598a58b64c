#!/usr/bin/env bash
# Installs the dependencies, builds Crema four ways and runs its checks
# (what CI runs: .ci/run). Each tree runs what only it can find:
#   1. CPU build: every suite and every scripted check, and the Python
#      package with its pytest suite (tests/python, the examples included);
#   2. CUDA build (where nvcc is): compiles every .cu file; builds every suite
#      and runs every check but the long training runs where a CUDA device
#      answers, else builds and runs the smoke set (the context, host/device
#      memory, the cuDNN registry and the tool in a CUDA build);
#   3. ThreadSanitizer build: the threading suites, the kernels that split over
#      the thread pool, and the crema tool training with two solver threads;
#   4. AddressSanitizer + UndefinedBehaviorSanitizer build (clang): every
#      suite, the crema tool's train, resume, test and time, and the libFuzzer
#      harnesses of tests/fuzz/ (a short run each, and their past crashes).
# Build trees live under build/; ccache keeps rebuilds cheap. CTest runs one
# process per suite (cmake/TestSuites.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${CREMA_JOBS:-$(nproc)}
start=$(date +%s)

./scripts/install_deps.sh --with-onnxruntime

stage="" stage_start=$start
step() {  # Ends the stage that ran (saying how long it took) and names the next.
  local now
  now=$(date +%s)
  [[ -n $stage ]] && echo "--- $stage: $((now - stage_start)) s"
  echo
  echo "=== $* (at $((now - start)) s)"
  stage=$* stage_start=$now
}

configure_build() {  # dir, cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  grep '^-- Crema' "$dir.configure.log"
  cmake --build "$dir" -j"$jobs"
}

run_ctest() {  # dir, ctest args...
  local dir=$1
  shift
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@"
  report_compat_skips "$dir"
}

# Names the tests that skipped for want of BVLC's reference files (a clone
# without ../shared/compat), with the reason each gave.
report_compat_skips() {  # dir
  local log=$1/Testing/Temporary/LastTest.log
  [[ -f $log ]] || return 0
  awk '/^[0-9]+\/[0-9]+ Testing: / { test = $3 }
       /no BVLC reference files at/ { sub(/^.*(SKIP: |\] )?no BVLC/, "no BVLC"); print "  " test ": " $0 }' \
    "$log" | sort -u | sed '1i skipped for want of the BVLC reference files:'
}

mkdir -p build

step "CPU build and tests (the Python package and its pytest suite too)"
configure_build build/cpu -DCREMA_CUDA=OFF -DCREMA_PYTHON=ON
run_ctest build/cpu

if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  step "CUDA build (every .cu file) and its tests"
  # The Python package is the same C++ in every tree: the CPU tree builds and
  # tests it; the benchmarks too. The suites are built for the smoke set first
  # (the library, every .cu file and the tools are all built then); the whole
  # set only where a device answers, since without one the GPU cases only skip.
  smoke_units="context;syncedmem;cudnn/cudnn_engine"
  configure_build build/cuda -DCREMA_CUDA=ON -DCREMA_PYTHON=OFF -DCREMA_BUILD_BENCHMARKS=OFF \
    "-DCREMA_TEST_UNITS=$smoke_units"
  devices=$( (build/cuda/bin/crema device_query 2>&1 || true) |
    sed -n 's/.*CUDA devices: \([0-9]*\).*/\1/p')
  if ((${devices:-0} > 0)); then
    echo "CUDA devices: $devices: building every suite; running every check but the long training runs"
    configure_build build/cuda -DCREMA_TEST_UNITS=
    run_ctest build/cuda -LE long
  else
    # The CPU tree ran the CPU cases; without a device the GPU cases would
    # only skip.
    echo "no CUDA device answers: running the smoke set (label smoke)"
    run_ctest build/cuda -L smoke
  fi
else
  step "CUDA build skipped: no nvcc on this machine"
fi

# The kernels that split their work over the thread pool are checked too;
# and, this tree being the one without oneDNN, the fold that every build
# makes (fold_into_convolution_weights) where no oneDNN lowering runs first.
thread_units="context;blocking_queue;internal_thread;thread_pool;producer_priority;data_reader;data_layer;annotated_data_layer;parallel;math_functions;convolution_layer;pooling_layer;lrn_layer;fold_into_convolution_weights"
step "ThreadSanitizer: $thread_units; the crema tool"
# oneDNN runs on OpenMP, whose synchronisation ThreadSanitizer cannot see: the
# TSan build checks Crema's own threads with the reference layers.
# It is also the tree without MPI: it compiles the one-process stand-in
# (src/crema/transport/one_process.cpp) that the other trees replace.
configure_build build/tsan -DCREMA_CUDA=OFF -DCREMA_DNNL=OFF -DCREMA_MPI=OFF -DCREMA_PYTHON=OFF -DCREMA_SANITIZE=thread \
  -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" "-DCREMA_TEST_UNITS=$thread_units"
TSAN_OPTIONS="suppressions=$root/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
  run_ctest build/tsan -L 'unit|sanitize'

step "AddressSanitizer + UndefinedBehaviorSanitizer (clang): every suite; the crema tool; the fuzzers"
# Built with clang, whose libFuzzer drives the harnesses of tests/fuzz/: each
# fuzzes its loader for a short fixed time and replays its past crashes, in
# the same tree (and under the same sanitizers) as the suites.
# -O1 with minimal debug info (-g1): sanitizer reports keep function names and lines
# of the frames that matter, and the build is much faster than -O2 -g.
(
  export CC=clang CXX=clang++
  configure_build build/asan -DCREMA_CUDA=OFF -DCREMA_SANITIZE=address -DCREMA_BUILD_BENCHMARKS=OFF \
    -DCREMA_FUZZ=ON -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1"
)
# allocator_may_return_null: an allocation too large for the machine returns
# null, which Crema reports as a MemoryError (the tests check that it does).
ASAN_OPTIONS="detect_leaks=1 abort_on_error=1 allocator_may_return_null=1" \
  UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" \
  LSAN_OPTIONS="suppressions=$root/tests/lsan.supp" \
  run_ctest build/asan -L 'unit|sanitize|fuzz'

step "all tests passed in $(($(date +%s) - start)) s"
