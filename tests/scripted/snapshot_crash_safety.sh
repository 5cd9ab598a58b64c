#!/usr/bin/env bash
# What a crash or a Ctrl-C does to a training run's snapshots:
#  1. SIGKILL, again and again, while snapshots are being written (a net whose
#     snapshot takes most of each iteration, snapshot: 1): after every kill the
#     newest solver state must resume and its weights must load.
#  2. SIGHUP snapshots and goes on; SIGINT snapshots and exits with status 0,
#     also with two solver threads (--solver_count=2).
#   snapshot_crash_safety.sh CREMA
set -euo pipefail
shopt -s nullglob
crema=$1
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/crema_crash_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat >net.prototxt <<'NET'
name: "crash"
layer { name: "data" type: "DummyData" top: "x" top: "y"
  dummy_data_param { shape { dim: 1 dim: 1000 } shape { dim: 1 dim: 1000 }
    data_filler { type: "gaussian" } data_filler { type: "gaussian" } } }
layer { name: "fc" type: "InnerProduct" bottom: "x" top: "p"
  inner_product_param { num_output: 1000 weight_filler { type: "gaussian" std: 0.01 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "p" bottom: "y" top: "loss" }
NET
solver() {  # max_iter snapshot prefix
  printf 'net: "net.prototxt"\nbase_lr: 0.001\nmomentum: 0.9\nlr_policy: "fixed"\n'
  printf 'display: 1\nmax_iter: %s\nsnapshot: %s\nsnapshot_prefix: "%s"\n' "$1" "$2" "$3"
}
solver 1000000 1 run >solver.prototxt
# The files of a pattern, oldest iteration first.
by_iter() { local files=($1); ((${#files[@]})) && printf '%s\n' "${files[@]}" | sort -t_ -k3 -n; }
newest_state() { by_iter 'run_iter_*.solverstate' | tail -1; }

# Whether a snapshot newer than STATE (a solver state file, or empty) exists.
snapshot_after() { [[ $(newest_state || true) != "$1" ]]; }
# Whether a snapshot is being written: its temporary file exists.
writing_snapshot() { local temporary=(*.tmp-*); ((${#temporary[@]})); }

kills=0 torn=0
for round in $(seq 1 8); do
  state=$(newest_state || true)
  resume=()
  [[ -n $state ]] && resume=(--snapshot="$state")
  log=round$round.log
  "$crema" train --solver=solver.prototxt "${resume[@]}" >"$log" 2>&1 &
  pid=$!
  # Kill while one of this run's own snapshots is being written, after one to
  # three whole ones (at random): which write is cut is chosen by the run's
  # events, never by a delay that a slow machine could exceed.
  for _ in $(seq 0 $((RANDOM % 3))); do
    wait_while_running "$pid" "$log" "round $round's next snapshot after '${state:-none}'" \
      snapshot_after "$state"
    state=$(newest_state)
  done
  wait_while_running "$pid" "$log" "round $round's next snapshot write" writing_snapshot
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  kills=$((kills + 1))
  # A kill mid-write leaves a temporary file behind, never a torn snapshot.
  leftovers=(*.tmp-*)
  torn=$((torn + ${#leftovers[@]}))
  rm -f -- "${leftovers[@]}"
  state=$(newest_state || true)
  [[ -n $state ]] || { echo "FAIL: round $round: no snapshot after the kill"; exit 1; }
  # The newest state resumes (one more iteration, into another prefix) ...
  iter=${state#run_iter_}
  iter=${iter%.solverstate}
  solver $((iter + 1)) 0 check >check_solver.prototxt
  "$crema" train --solver=check_solver.prototxt --snapshot="$state" >check.log 2>&1 ||
    { echo "FAIL: round $round: $state does not resume"; tail -5 check.log; exit 1; }
  grep -q "Iteration $iter" check.log ||
    { echo "FAIL: round $round: resuming $state did not continue at $iter"; exit 1; }
  # ... and the newest weights load.
  model=$(by_iter 'run_iter_*.caffemodel' | tail -1)
  "$crema" test --model=net.prototxt --weights="$model" --iterations=1 >test.log 2>&1 ||
    { echo "FAIL: round $round: $model does not load"; tail -5 test.log; exit 1; }
  # Keep the folder small: only the newest two snapshots stay.
  for old in $(by_iter 'run_iter_*.solverstate' | head -n -2); do
    rm -f "$old" "${old%.solverstate}.caffemodel"
  done
  rm -f check_iter_*
done
# Every kill is sent while a temporary file exists; it is gone only if the
# write finished in the moment between the look and the kill.
((torn > 0)) || { echo "FAIL: none of $kills kills landed mid-write"; exit 1; }
echo "SIGKILL: $kills kills, $torn of them mid-write (temporary files left); the newest" \
  "snapshot resumed and loaded every time"

# SIGHUP: snapshot and go on; SIGINT: snapshot, stop, exit 0.
solver 1000000 0 signal >signal_solver.prototxt
"$crema" train --solver=signal_solver.prototxt >signal.log 2>&1 &
pid=$!
wait_while_running "$pid" signal.log "iteration 5" logged_iteration signal.log 5
kill -HUP "$pid"
has_hup_snapshot() { [[ -n $(by_iter 'signal_iter_*.solverstate') ]]; }
wait_while_running "$pid" signal.log "the snapshot SIGHUP asks for" has_hup_snapshot
hup_snapshots=$(by_iter 'signal_iter_*.solverstate' | wc -l)
# Training goes on past the SIGHUP snapshot's iteration (so SIGINT's snapshot,
# at a later one, is a file of its own).
hup_iter=$(by_iter 'signal_iter_*.solverstate' | tail -1)
hup_iter=${hup_iter#signal_iter_}
hup_iter=${hup_iter%.solverstate}
wait_while_running "$pid" signal.log "training to go on after the SIGHUP snapshot" \
  logged_iteration signal.log $((hup_iter + 2))
kill -INT "$pid"
status=0
wait "$pid" || status=$?
[[ $status -eq 0 ]] || { echo "FAIL: SIGINT exit status $status"; tail -5 signal.log; exit 1; }
grep -q "Optimization stopped early" signal.log || { echo "FAIL: no early stop logged"; exit 1; }
[[ $(by_iter 'signal_iter_*.solverstate' | wc -l) -gt $hup_snapshots ]] ||
  { echo "FAIL: SIGINT wrote no snapshot"; exit 1; }
echo "SIGHUP: snapshot written, training went on; SIGINT: snapshot written, exit status 0"

# The same stop with two solver threads: every solver stops, the root snapshots.
# Its own prefix: a snapshot at an iteration the run above also reached would
# overwrite that run's file and not be counted.
solver 1000000 0 parallel >parallel_solver.prototxt
"$crema" train --solver=parallel_solver.prototxt --solver_count=2 >parallel.log 2>&1 &
pid=$!
wait_while_running "$pid" parallel.log "iteration 5 with 2 solvers" logged_iteration parallel.log 5
kill -INT "$pid"
status=0
wait "$pid" || status=$?
[[ $status -eq 0 ]] || { echo "FAIL: 2 solvers: SIGINT exit status $status"; tail -5 parallel.log; exit 1; }
[[ -n $(by_iter 'parallel_iter_*.solverstate') ]] ||
  { echo "FAIL: 2 solvers: SIGINT wrote no snapshot"; tail -5 parallel.log; exit 1; }
echo "2 solver threads: SIGINT: snapshot written, exit status 0"
