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

# require_compat DIR: the folder of BVLC reference files a check reads
# (CREMA_COMPAT_DIR, when set, instead of DIR) in $compat. Where it is missing
# the check stops: skipped (exit 77, which CTest counts as a skip) on a clone
# alone, failed under CI=true, where the files must be there.
require_compat() {
  compat=${CREMA_COMPAT_DIR:-$1}
  [[ -d $compat ]] && return 0
  if [[ ${CI:-} == true ]]; then
    echo "FAIL: the BVLC reference files are missing at $compat (CI=true: they must be there)"
    exit 1
  fi
  echo "SKIP: no BVLC reference files at $compat (../shared/compat beside the checkout, or CREMA_COMPAT_DIR)"
  exit 77
}

# make_test_lmdb CONVERT_MNIST_DATA DB: the 10,000 Fashion-MNIST test images
# (the Debian package dataset-fashion-mnist) as an LMDB of Datums at DB.
make_test_lmdb() {
  local raw=${CREMA_FASHION_MNIST_RAW:-/usr/share/datasets/fashion-mnist}
  GLOG_minloglevel=1 "$1" --backend=lmdb "$raw/t10k-images-idx3-ubyte.gz" \
    "$raw/t10k-labels-idx1-ubyte.gz" "$2" >/dev/null ||
    { echo "FAIL: convert_mnist_data could not write $2"; exit 1; }
}

# lenet_net SOURCE_DIR DB OUT: models/lenet's training net reading DB for
# both phases.
lenet_net() {
  sed -e "s#data/fashion_mnist/fashion_train_lmdb#$2#" -e "s#data/fashion_mnist/fashion_test_lmdb#$2#" \
    "$1/models/lenet/lenet_train_test.prototxt" >"$3"
  grep -q "source: \"$2\"" "$3" ||
    { echo "FAIL: models/lenet/lenet_train_test.prototxt no longer names the LMDBs this check rewrites"; exit 1; }
}

# expect_bounded_error NAME TEXT LIMIT_MIB COMMAND...: COMMAND must exit 1 with
# an error line holding TEXT, without an abort, and with a peak resident set
# (as /usr/bin/time -v measures it) below LIMIT_MIB. Counts failures in
# $failures and prints the peak of each case.
expect_bounded_error() {
  local name=$1 text=$2 limit=$3 status=0
  shift 3
  /usr/bin/time -v -o peak.txt "$@" >case.log 2>&1 || status=$?
  [[ -s peak.txt ]] && status=$(awk -F': ' '/Exit status/ {print $2}' peak.txt)
  local kib
  kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' peak.txt)
  local peak="peak $((kib / 1024)) MiB"
  if [[ $status != 1 ]]; then
    echo "FAIL $name: exit status $status (expected 1), $peak"
  elif grep -qE 'Check failed|\*\*\* |terminate called|Aborted|Segmentation' case.log; then
    echo "FAIL $name: aborted instead of an error line, $peak"
  elif ! grep -qF -- "$text" case.log; then
    echo "FAIL $name: the error does not say '$text', $peak"
  elif ((kib >= limit * 1024)); then
    echo "FAIL $name: $peak, not below $limit MiB"
  else
    echo "ok   $name ($peak): $(grep -F -- "$text" case.log | head -1 | sed 's/^.*\] //')"
    return 0
  fi
  tail -5 case.log
  failures=$((failures + 1))
}
