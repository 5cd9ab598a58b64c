# Shared by the scripted checks (sourced). A check waits for events, never
# for a fixed time: how fast this machine is must not decide the verdict. A
# wait that runs out fails the check and says what it waited for; its limit
# is only there so that a hang fails instead of blocking CI.

# How long a wait may take before it counts as a hang, in seconds.
WAIT_LIMIT=${CREMA_CHECK_WAIT_LIMIT:-300}

# wait_for WHAT COMMAND...: runs COMMAND every 50 ms until it succeeds.
wait_for() {
  local what=$1
  shift
  local deadline=$((SECONDS + WAIT_LIMIT))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      echo "FAIL: waited $WAIT_LIMIT s for $what"
      return 1
    fi
    sleep 0.05
  done
}

# wait_while_running PID LOG WHAT COMMAND...: as wait_for, and fails at once,
# with the end of LOG, when process PID ends before COMMAND succeeds.
wait_while_running() {
  local pid=$1 log=$2 what=$3
  shift 3
  local deadline=$((SECONDS + WAIT_LIMIT))
  until "$@"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "FAIL: the run ended before $what"
      tail -5 "$log"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "FAIL: waited $WAIT_LIMIT s for $what"
      tail -5 "$log"
      return 1
    fi
    sleep 0.05
  done
}

# Whether LOG has a display line of iteration N or later.
logged_iteration() {  # LOG N
  awk -v n="$2" '/Iteration [0-9]+/ {
      for (i = 1; i < NF; ++i) if ($i == "Iteration") { sub(/[^0-9].*/, "", $(i + 1)); if ($(i + 1) + 0 >= n) found = 1 }
    } END { exit !found }' "$1"
}
