#!/usr/bin/env bash
# Installs the dependencies, builds Crema and runs every test:
#   1. CPU build (CREMA_CUDA=OFF): all suites;
#   2. CUDA build (when nvcc is found): compiles every .cu file for one
#      architecture and runs the suites, GPU tests skipping where no device is;
#   3. ThreadSanitizer build: the threading suites;
#   4. AddressSanitizer + UndefinedBehaviorSanitizer build: all suites.
# Build trees live under build/ and ccache keeps rebuilds cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${CREMA_JOBS:-$(nproc)}
start=$(date +%s)

./scripts/install_deps.sh

step() { echo; echo "=== $* ($(($(date +%s) - start)) s)"; }

configure_build() {  # dir, cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j"$jobs"
}

run_ctest() {  # dir, ctest args...
  local dir=$1
  shift
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@"
}

mkdir -p build

step "CPU build and tests"
configure_build build/cpu -DCREMA_CUDA=OFF
run_ctest build/cpu

if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  step "CUDA build (compile for CREMA_CUDA_ARCH=90) and tests"
  configure_build build/cuda -DCREMA_CUDA=ON -DCREMA_CUDA_ARCH=90
  # The CPU build already ran the long training check; its code is the same here.
  run_ctest build/cuda -LE long
else
  step "CUDA build skipped: no nvcc on this machine"
fi

# The kernels that split their work over the thread pool are checked too.
thread_units="context;blocking_queue;internal_thread;thread_pool;data_reader;parallel;math_functions;convolution_layer;pooling_layer;lrn_layer"
step "ThreadSanitizer: $thread_units"
# oneDNN runs on OpenMP, whose synchronisation ThreadSanitizer cannot see: the
# TSan build checks Crema's own threads with the reference layers.
configure_build build/tsan -DCREMA_CUDA=OFF -DCREMA_DNNL=OFF -DCREMA_SANITIZE=thread -DCREMA_BUILD_TOOLS=OFF \
  -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" "-DCREMA_TEST_UNITS=$thread_units"
TSAN_OPTIONS="suppressions=$root/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
  run_ctest build/tsan

step "AddressSanitizer + UndefinedBehaviorSanitizer: all suites"
# -O1 with minimal debug info (-g1): sanitizer reports keep function names and lines
# of the frames that matter, and the build is much faster than -O2 -g.
configure_build build/asan -DCREMA_CUDA=OFF -DCREMA_SANITIZE=address -DCREMA_BUILD_TOOLS=OFF \
  -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1"
ASAN_OPTIONS="detect_leaks=1 abort_on_error=1" \
  UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" \
  LSAN_OPTIONS="suppressions=$root/tests/lsan.supp" \
  run_ctest build/asan

step "all tests passed in $(($(date +%s) - start)) s"
