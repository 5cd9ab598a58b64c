#!/usr/bin/env bash
# The GPU kit's plumbing where there is no GPU: scripts/gpu/bundle.sh packs
# this build tree, scripts/gpu/check.sh --dry unpacks it, finds its
# libraries, runs the GPU tests (which skip here) and a short CPU LeNet run,
# says the GPU parts were skipped, and writes summary.md and logs.tar.gz; an
# archive that is not one fails with one message and exit 1.
#   gpu_check_dry_run.sh BUILD_DIR REPO_ROOT
set -euo pipefail
build=$1 root=$2
work=$(mktemp -d /tmp/crema_gpu_dry_XXXXXX)
trap 'rm -rf "$work"' EXIT
expect() {  # file pattern: the file has a line matching pattern
  grep -q -- "$2" "$1" || { echo "gpu_check_dry_run: no '$2' in $1:"; cat "$1"; exit 1; }
}

XZ_OPT=-0 "$root/scripts/gpu/bundle.sh" --build "$build" --out "$work/bundle" >"$work/bundle.log" 2>&1 ||
  { cat "$work/bundle.log"; exit 1; }
expect "$work/bundle.log" "crema-gpu.tar.xz: [0-9]* MiB"
LENET_ITERATIONS=100 SHARDS=2 "$root/scripts/gpu/check.sh" --dry "$work/bundle/crema-gpu.tar.xz" \
  "$work/results" >"$work/check.log" 2>&1 || { cat "$work/check.log"; exit 1; }
summary=$work/results/summary.md
expect "$summary" "GPU parts skipped: --dry"
expect "$summary" "GPU tests in 2 shards: .* 0 failed"
expect "$summary" "CPU: accuracy 0\.[0-9]"
expect "$summary" "GPU: skipped"
expect "$summary" "skipped: no GPU"
expect "$summary" "check.sh: 0 failure(s)"
tar -tzf "$work/results/logs.tar.gz" >"$work/logs.txt"
expect "$work/logs.txt" "logs/lenet_cpu.log"
expect "$work/logs.txt" "logs/tests_1.json"

echo "not an archive" >"$work/broken.tar.xz"
if "$root/scripts/gpu/check.sh" "$work/broken.tar.xz" "$work/broken" >"$work/broken.log" 2>&1; then
  echo "gpu_check_dry_run: check.sh accepted a broken archive"
  exit 1
fi
expect "$work/broken/summary.md" "FAILED: cannot unpack"
echo "gpu_check_dry_run: bundle and dry check passed"
