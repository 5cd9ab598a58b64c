#!/usr/bin/env bash
# Crema's engines against each other: the reference bodies (engine CAFFE),
# oneDNN wherever it serves (engine DNNL) and the default choice (DEFAULT),
# per net and per layer type. What engine DEFAULT picks for each type rests on
# these figures (src/crema/dnnl/default_policy.hpp).
#
# What it measures: `crema time --threads=2` forward + backward milliseconds of
#   lenet          models/lenet's training net, batch 64 (Data layers replaced
#                  by a zero-filled Input layer: the layers are timed, not a
#                  database)
#   cifar10_quick  models/cifar10_quick's training net, batch 100 (the same)
#   alexnet        models/alexnet's deploy net, batch 10
#   googlenet      a GoogLeNet deploy net (batch 10) given as GOOGLENET=PATH,
#                  e.g. BVLC's bvlc_googlenet/deploy.prototxt
# with every layer that has an engine set to each engine (scripts/bench/
# set_engine.py), the three engines in alternation, ROUNDS rounds; it prints
# the median per engine and, for the last round, the milliseconds per layer
# type (forward + backward) under each engine.
#
# How to run (from anywhere; it works in the repository root):
#   scripts/bench/engines.sh [BUILD_DIR]      (default build/release)
# Environment knobs: ROUNDS (default 3); NETS (default "lenet cifar10_quick
# alexnet", and googlenet where GOOGLENET is set). It builds only crema_tool (configuring BUILD_DIR as
# Release if it has no CMakeCache.txt); a build without oneDNN runs the
# reference bodies under every engine. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${ROUNDS:-3}
nets=${NETS:-lenet cifar10_quick alexnet${GOOGLENET:+ googlenet}}
source scripts/bench/pytorch_setup.sh  # median

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target crema_tool >/dev/null
crema=$PWD/$build/bin/crema

work=$(mktemp -d /tmp/crema_bench_engines_XXXXXX)
trap 'rm -rf "$work"' EXIT

for net in $nets; do
  case $net in
    lenet) source=models/lenet/lenet_train_test.prototxt input=64,1,28,28 iterations=100 ;;
    cifar10_quick) source=models/cifar10_quick/cifar10_quick_train_test.prototxt
      input=100,3,32,32 iterations=20 ;;
    alexnet) source=models/alexnet/alexnet_deploy.prototxt input= iterations=5 ;;
    googlenet) source=${GOOGLENET:?set GOOGLENET to a GoogLeNet deploy prototxt} input=
      iterations=3 ;;
    *) echo "engines.sh: unknown net $net" >&2; exit 2 ;;
  esac
  declare -A runs=()
  for round in $(seq 1 "$rounds"); do
    for engine in CAFFE DNNL DEFAULT; do
      scripts/bench/set_engine.py "$source" "$work/$engine.prototxt" "$engine" "$work/types" $input
      "$crema" time --model="$work/$engine.prototxt" --iterations="$iterations" --threads=2 \
        >"$work/$engine.log" 2>&1 || { tail -n 20 "$work/$engine.log" >&2; exit 1; }
      ms=$(sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' "$work/$engine.log")
      runs[$engine]+="$ms "
    done
  done
  echo "$net: forward + backward ms, median of $rounds alternating rounds"
  for engine in CAFFE DNNL DEFAULT; do
    printf '  %-8s %8.2f   (%s)\n' "$engine" "$(tr ' ' '\n' <<<"${runs[$engine]}" | grep . | median)" \
      "${runs[$engine]% }"
  done
  echo "  per layer type, last round (ms, forward + backward): CAFFE / DNNL / DEFAULT"
  for engine in CAFFE DNNL DEFAULT; do
    grep -E '\]\s+\S+\s+(forward|backward): ' "$work/$engine.log" | sed 's/.*\]  *//' |
      awk -v types="$work/types" -v engine="$engine" '
        BEGIN { while ((getline line < types) > 0) { split(line, f, " "); type[f[1]] = f[2] } }
        { sum[type[$1]] += $3 }
        END { for (t in sum) if (t != "") print t, engine, sum[t] }'
  done | awk '{ ms[$1, $2] = $3; seen[$1] = 1 }
    END { for (t in seen) printf "    %-14s %8.2f %8.2f %8.2f\n", t, ms[t, "CAFFE"], ms[t, "DNNL"], ms[t, "DEFAULT"] }' |
    sort
  unset runs
done
