#!/usr/bin/env bash
# The crema tool's OpenMP wait policy on deploy nets: `crema time
# --phase=TEST` ("Average Forward pass alone", ITERATIONS whole forward
# passes, 2 threads) under OMP_WAIT_POLICY=passive, what the tool set for
# every command before, against the runtime's default, what it keeps for
# commands that only run nets forward. The two alternate, ROUNDS rounds, on
#   mobilenet_v1, mobilenet_ssd, ssd_face  (models/NET/make_NET.py --batch B)
# at batch 1 and 8, with Crema's fillers' random weights. It prints each
# policy's median over rounds (min-max) and passive / default (above 1: the
# default is faster).
#   scripts/bench/tool_wait_policy.sh [BUILD_DIR]      (default build/release)
# Environment knobs: ROUNDS (default 5), ITERATIONS (default 30), NETS,
# BATCHES (default "1 8"). Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/pytorch_setup.sh  # python, median_spread
build=${1:-build/release}
rounds=${ROUNDS:-5}
iterations=${ITERATIONS:-30}
nets=${NETS:-mobilenet_v1 mobilenet_ssd ssd_face}
batches=${BATCHES:-1 8}
[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool >/dev/null

work=$(mktemp -d /tmp/crema_bench_wait_XXXXXX)
trap 'rm -rf "$work"' EXIT
forward_alone() {  # forward_alone NET_FILE POLICY ("" for the default): ms
  local policy=()
  [[ -n $2 ]] && policy=(OMP_WAIT_POLICY="$2")
  env "${policy[@]}" "$build/bin/crema" time --model="$1" --phase=TEST --threads=2 \
    --iterations="$iterations" 2>&1 | sed -n 's/.*Average Forward pass alone: \([0-9.]*\) ms.*/\1/p'
}
printf '%-14s %5s %22s %22s %8s\n' net batch passive default passive/default
for net in $nets; do
  for batch in $batches; do
    "$python" "models/$net/make_$net.py" --batch "$batch" "$work/net.prototxt" >/dev/null
    : >"$work/passive"; : >"$work/default"
    for ((r = 0; r < rounds; ++r)); do
      forward_alone "$work/net.prototxt" passive >>"$work/passive"
      forward_alone "$work/net.prototxt" "" >>"$work/default"
    done
    passive=$(median_spread <"$work/passive") default=$(median_spread <"$work/default")
    printf '%-14s %5d %22s %22s %8.2f\n' "$net" "$batch" "$passive" "$default" \
      "$(awk -v a="${passive%% *}" -v b="${default%% *}" 'BEGIN { print a / b }')"
  done
done
