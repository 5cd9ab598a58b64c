#!/usr/bin/env bash
# Crema against itself: the crema tools of two builds (a change's before and
# after) on the same nets, in alternating rounds, for a change that must not
# move speed (a refactor).
#
# What it measures, with `crema time --threads=2`:
#   training steps (forward + backward, TRAIN phase): lenet (models/lenet,
#     batch 64, Data layers replaced by a zero-filled Input: scripts/bench/
#     set_engine.py), alexnet (models/alexnet's deploy net), resnet50
#     (models/resnet50's deploy net);
#   whole forward passes ("Average Forward pass alone", TEST phase: the net
#     folds as a deploy net does):
#     mobilenet_v1, resnet50, and every deploy net of ../shared/realnets/ that
#     has an input shape (each folder's deploy.prototxt), where ../shared is
#     there.
# Each round runs BEFORE then AFTER, then the next round AFTER then BEFORE.
# It prints, per net, the median milliseconds of each build with their
# spread (min-max over the rounds) and AFTER / BEFORE of the medians.
#
# How to run (from anywhere):
#   scripts/bench/two_builds.sh BEFORE_TOOL AFTER_TOOL
# e.g. a worktree of the parent commit built with
#   cmake -S WT -B WT/build -DCMAKE_BUILD_TYPE=Release && cmake --build WT/build --target crema_tool
# Environment knobs: ROUNDS (default 5), ITERATIONS (default: per net),
# REALNETS=0 to leave ../shared/realnets out, ONLY=REGEX to time only the nets
# whose names match. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
before=${1:?usage: two_builds.sh BEFORE_TOOL AFTER_TOOL}
after=${2:?usage: two_builds.sh BEFORE_TOOL AFTER_TOOL}
rounds=${ROUNDS:-5}
source scripts/bench/pytorch_setup.sh  # median

work=$(mktemp -d /tmp/crema_bench_two_builds_XXXXXX)
trap 'rm -rf "$work"' EXIT

# name phase file iterations
cases=()
scripts/bench/set_engine.py models/lenet/lenet_train_test.prototxt "$work/lenet.prototxt" \
  DEFAULT "$work/types" 64,1,28,28
cases+=("lenet-step TRAIN $work/lenet.prototxt 100")
cases+=("alexnet-step TRAIN models/alexnet/alexnet_deploy.prototxt 3")
cases+=("resnet50-step TRAIN models/resnet50/resnet50_deploy.prototxt 2")
cases+=("mobilenet_v1-forward TEST models/mobilenet_v1/mobilenet_v1_deploy.prototxt 10")
cases+=("resnet50-forward TEST models/resnet50/resnet50_deploy.prototxt 3")
if [[ ${REALNETS:-1} != 0 && -d ../shared/realnets ]]; then
  for deploy in ../shared/realnets/*/deploy.prototxt; do
    grep -qE '^(input_shape|input_dim)|type: *"Input"' "$deploy" || continue
    cases+=("$(basename "$(dirname "$deploy")")-forward TEST $deploy 3")
  done
fi

time_once() {  # tool phase file iterations -> ms
  local log=$work/run.log
  "$1" time --model="$3" --phase="$2" --iterations="${ITERATIONS:-$4}" --threads=2 >"$log" 2>&1 ||
    { tail -n 5 "$log" >&2; echo "two_builds.sh: $1 failed on $3" >&2; return 1; }
  if [[ $2 == TRAIN ]]; then
    sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' "$log"
  else
    sed -n 's/.*Average Forward pass alone: \([0-9.]*\) ms.*/\1/p' "$log"
  fi
}

printf '%-28s %12s %17s %12s %17s %8s\n' net before "(spread)" after "(spread)" ratio
for entry in "${cases[@]}"; do
  read -r name phase file iterations <<<"$entry"
  [[ -z ${ONLY:-} || $name =~ $ONLY ]] || continue
  b="" a=""
  for round in $(seq 1 "$rounds"); do
    if ((round % 2)); then
      b+="$(time_once "$before" "$phase" "$file" "$iterations") "
      a+="$(time_once "$after" "$phase" "$file" "$iterations") "
    else
      a+="$(time_once "$after" "$phase" "$file" "$iterations") "
      b+="$(time_once "$before" "$phase" "$file" "$iterations") "
    fi
  done
  mb=$(tr ' ' '\n' <<<"$b" | grep . | median)
  ma=$(tr ' ' '\n' <<<"$a" | grep . | median)
  spread() { tr ' ' '\n' <<<"$1" | grep . | sort -g | sed -n '1p;$p' | paste -sd- ; }
  printf '%-28s %12.2f %17s %12.2f %17s %8.3f\n' "$name" "$mb" "($(spread "$b"))" "$ma" \
    "($(spread "$a"))" "$(awk -v a="$ma" -v b="$mb" 'BEGIN { print a / b }')"
done
