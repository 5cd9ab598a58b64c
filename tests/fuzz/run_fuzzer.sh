#!/usr/bin/env bash
# Runs one libFuzzer harness (tests/fuzz/CMakeLists.txt, scripts/fuzz.sh):
#   run_fuzzer.sh regressions BINARY NAME
#       every input under regressions/NAME/ once (each was a crash once);
#   run_fuzzer.sh fuzz BINARY NAME SECONDS WORKDIR [libFuzzer flags...]
#       fuzzes for SECONDS on WORKDIR/NAME/corpus, seeded from real files and
#       from the seeds the harness writes itself; a crash, leak, UBSan report
#       or timeout fails, leaving the input as WORKDIR/NAME/crash-* (etc.).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${CREMA_SHARED_DIR:-$root/../shared}
mode=$1 binary=$2 name=$3

# allocator_may_return_null: a huge allocation returns null, which Crema
# reports as a MemoryError (ASan's default would abort on the request).
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:${LSAN_OPTIONS:-}"
export GLOG_minloglevel=3
# OpenCV decodes any image of up to 2^30 pixels (3 GiB in colour), more than
# libFuzzer's memory limit below: a record whose JPEG header claims
# 28000x28000 is a valid image, not a bug, so the harnesses decode at most
# 16 Mpixels (OpenCV reads this once, when it is loaded).
export OPENCV_IO_MAX_IMAGE_PIXELS=16777216

if [[ $mode == regressions ]]; then
  shopt -s nullglob
  inputs=("$here/regressions/$name"/*)
  if ((${#inputs[@]} == 0)); then
    echo "fuzz_$name: no regression inputs"
    exit 0
  fi
  exec "$binary" "${inputs[@]}"
fi

seconds=$4 work=$5/$name
shift 5
corpus=$work/corpus
mkdir -p "$corpus"
seed() {  # files...: copies readable seeds into the corpus (skips missing ones)
  local f
  for f in "$@"; do
    [[ -f $f ]] && cp "$f" "$corpus/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
  done
  return 0
}
case $name in
  net)
    seed $(find "$root/models" "$shared/compat" -name '*.prototxt' ! -name '*solver*' 2>/dev/null) ;;
  solver)
    seed $(find "$root/models" "$shared/compat" -name '*solver*.prototxt' 2>/dev/null) ;;
esac
# The harness writes the seeds no repository file gives (small weights,
# solver states, records, databases, idx files).
CREMA_FUZZ_WRITE_SEEDS=$corpus "$binary" >"$work/seeds.log" 2>&1 ||
  { tail -20 "$work/seeds.log"; echo "fuzz_$name: writing the seeds failed"; exit 1; }
flags=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 -print_final_stats=1
       -artifact_prefix="$work/")
[[ -f $here/$name.dict ]] && flags+=(-dict="$here/$name.dict")
case $name in
  net | solver) flags+=(-max_len=8192) ;;
esac
log=$work/last_run.log
if "$binary" "${flags[@]}" "$@" "$corpus" >"$log" 2>&1; then
  grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1
  grep -E 'stat::number_of_executed_units' "$log" || true
  exit 0
fi
tail -60 "$log"
echo "fuzz_$name: failed; the input is in $work (crash-*, leak-*, timeout-*, oom-*)"
exit 1
