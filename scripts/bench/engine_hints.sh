#!/usr/bin/env bash
# Published nets' engine fields: a file that names Caffe's runtimes (the
# published MobileNets put engine: CAFFE on every depthwise convolution) must
# run as fast as the same file without them (engine_mode FASTEST, the
# default). `crema time --phase=TEST` ("Average Forward pass alone",
# ITERATIONS whole forward passes, 2 threads), ROUNDS alternating rounds of
#   published   the file as published (../shared/realnets/NET/deploy.prototxt)
#   every       engine: CAFFE on every layer that has an engine field
#   none        every engine field removed
#   as_written  the published file with engine_mode: AS_WRITTEN (CAFFE runs
#               Crema's reference bodies: what the field meant before)
# for NETS (default: mobilenet_v1 mobilenet_v2), with Crema's fillers' random
# weights. Prints each variant's median over rounds (min-max) and its ratio
# to "none" (1.00: as fast; above 1: slower).
#   scripts/bench/engine_hints.sh [BUILD_DIR]      (default build/release)
# Environment knobs: ROUNDS (default 7), ITERATIONS (default 30), NETS,
# REALNETS (default ../shared/realnets). Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/pytorch_setup.sh  # python, median_spread
build=${1:-build/release}
rounds=${ROUNDS:-7}
iterations=${ITERATIONS:-30}
nets=${NETS:-mobilenet_v1 mobilenet_v2}
realnets=${REALNETS:-../shared/realnets}
[[ -d $realnets ]] || { echo "engine_hints: no published nets at $realnets (REALNETS)" >&2; exit 2; }
[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool >/dev/null

work=$(mktemp -d /tmp/crema_bench_hints_XXXXXX)
trap 'rm -rf "$work"' EXIT
forward_alone() {  # forward_alone NET_FILE: ms
  "$build/bin/crema" time --model="$1" --phase=TEST --threads=2 --iterations="$iterations" 2>&1 |
    sed -n 's/.*Average Forward pass alone: \([0-9.]*\) ms.*/\1/p'
}
variants=(published every none as_written)
printf '%-14s' net
for v in "${variants[@]}"; do printf ' %22s' "$v"; done
printf '  %s\n' "published/none every/none as_written/none"
for net in $nets; do
  cp "$realnets/$net/deploy.prototxt" "$work/published.prototxt"
  "$python" scripts/bench/set_engine.py "$work/published.prototxt" "$work/every.prototxt" CAFFE \
    "$work/types"
  sed -i '1{/^engine_mode: AS_WRITTEN$/d}' "$work/every.prototxt"
  sed -E 's/\bengine: *[A-Z0-9]+//' "$work/published.prototxt" >"$work/none.prototxt"
  { echo "engine_mode: AS_WRITTEN"; cat "$work/published.prototxt"; } >"$work/as_written.prototxt"
  for v in "${variants[@]}"; do : >"$work/$v.ms"; done
  for ((r = 0; r < rounds; ++r)); do
    for v in "${variants[@]}"; do forward_alone "$work/$v.prototxt" >>"$work/$v.ms"; done
  done
  printf '%-14s' "$net"
  for v in "${variants[@]}"; do printf ' %22s' "$(median_spread <"$work/$v.ms")"; done
  none=$(median <"$work/none.ms")
  for v in published every as_written; do
    printf '  %.2f' "$(awk -v a="$(median <"$work/$v.ms")" -v b="$none" 'BEGIN { print a / b }')"
  done
  printf '\n'
done
