#!/usr/bin/env bash
# The crema tool's own threads and files in a few seconds, short enough for
# the sanitizer builds: models/lenet over the Fashion-MNIST test images (an
# LMDB written here by convert_mnist_data),
#  1. `crema train` with two solver threads (Data layers, the shared reader,
#     prefetching, the gradient all-reduce), testing and snapshotting;
#  2. a resume from the middle snapshot, to the end;
#  3. `crema test` of the final weights; 4. `crema time` of the net;
#  5. the OpenMP wait policy each command ran under.
#   tool_short_runs.sh CREMA CONVERT_MNIST_DATA SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
crema=$(realpath "$1") convert=$(realpath "$2") source=$(realpath "$3")
work=$(mktemp -d /tmp/crema_tool_runs_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
make_test_lmdb "$convert" "$work/test_lmdb"
lenet_net "$source" "$work/test_lmdb" lenet.prototxt
sed -e 's#batch_size: 64#batch_size: 16#' -e 's#batch_size: 100#batch_size: 20#' \
  lenet.prototxt >net.prototxt
grep -q 'batch_size: 16' net.prototxt && grep -q 'batch_size: 20' net.prototxt ||
  { echo "FAIL: models/lenet's net no longer has the batch sizes this check rewrites"; exit 1; }
cat >solver.prototxt <<'SOLVER'
net: "net.prototxt"
base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005
lr_policy: "inv" gamma: 0.0001 power: 0.75
display: 2 max_iter: 12
test_iter: 2 test_interval: 6
snapshot: 6 snapshot_prefix: "lenet"
random_seed: 3
SOLVER

fail() {  # MESSAGE LOG
  echo "FAIL: $1"
  tail -15 "$2"
  exit 1
}
# The last value a log gives for "Test net output #k: NAME = v" or "] NAME = v".
last_value() { grep -o "$2 = [-0-9.e+naif]*" "$1" | tail -1 | awk '{print $NF}'; }
# Whether V is a finite number in [LOW, HIGH].
in_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ && v >= lo && v <= hi) }'; }

"$crema" train --solver=solver.prototxt --solver_count=2 >train.log 2>&1 || fail "crema train" train.log
grep -q "Iteration 12" train.log || fail "training did not reach iteration 12" train.log
[[ $(grep -c "Test net output #0: accuracy" train.log) -ge 2 ]] || fail "fewer than 2 test passes" train.log
accuracy=$(last_value train.log "accuracy")
in_range "$accuracy" 0 1 || fail "test accuracy '$accuracy' is not in [0, 1]" train.log
for f in lenet_iter_6.caffemodel lenet_iter_6.solverstate lenet_iter_12.caffemodel; do
  [[ -s $f ]] || fail "no snapshot $f" train.log
done

"$crema" train --solver=solver.prototxt --solver_count=2 --snapshot=lenet_iter_6.solverstate \
  >resume.log 2>&1 || fail "crema train --snapshot" resume.log
grep -q "Iteration 6" resume.log && grep -q "Iteration 12" resume.log ||
  fail "the resumed run did not go from iteration 6 to 12" resume.log

"$crema" test --model=net.prototxt --weights=lenet_iter_12.caffemodel --iterations=2 \
  >test.log 2>&1 || fail "crema test" test.log
test_accuracy=$(grep -o '] accuracy = [-0-9.e+naif]*' test.log | tail -1 | awk '{print $NF}')
in_range "$test_accuracy" 0 1 || fail "crema test accuracy '$test_accuracy' is not in [0, 1]" test.log

"$crema" time --model=net.prototxt --iterations=2 >time.log 2>&1 || fail "crema time" time.log
total=$(grep -o 'Average Forward-Backward: [0-9.e+-]*' time.log | awk '{print $NF}')
in_range "$total" 1e-9 1e9 || fail "no positive forward-backward time" time.log
alone=$(grep -o 'Average Forward pass alone: [0-9.e+-]*' time.log | awk '{print $NF}')
in_range "$alone" 1e-9 1e9 || fail "no positive time for forward passes alone" time.log

# The OpenMP wait policy: passive where the tool trains, the runtime's default
# where it only runs nets forward, and the user's own wherever one is set.
policy() { grep -o 'OpenMP wait policy: .*' "$1" | head -1 | cut -d' ' -f4-; }
"$crema" time --model=net.prototxt --phase=TEST --iterations=1 >time_test.log 2>&1 ||
  fail "crema time --phase=TEST" time_test.log
OMP_WAIT_POLICY=active "$crema" time --model=net.prototxt --iterations=1 >time_active.log 2>&1 ||
  fail "crema time under OMP_WAIT_POLICY=active" time_active.log
for expected in "train.log passive" "time.log passive" "test.log the runtime's default" \
  "time_test.log the runtime's default" "time_active.log active"; do
  log=${expected%% *} want=${expected#* }
  [[ $(policy "$log") == "$want" ]] || fail "$log: OpenMP wait policy '$(policy "$log")', not '$want'" "$log"
done

echo "crema train (2 solvers, 12 iterations, test accuracy $accuracy), resume from 6," \
  "crema test (accuracy $test_accuracy), crema time ($total ms): all ran"
