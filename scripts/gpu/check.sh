#!/usr/bin/env bash
# The GPU check: runs on a GPU machine (bare: no -dev libraries, no network)
# from the checkout, with the archive scripts/gpu/bundle.sh made here.
#
#   scripts/gpu/check.sh [--dry] ARCHIVE RESULTS_DIR
#
# It unpacks the archive, finds the CUDA libraries the machine has (its CUDA
# toolkit, PyTorch's wheels), prints nvidia-smi and `crema device_query`, and
# then:
#   1. runs every GPU test of the suite (the GPU instances of the typed
#      suites: layers' GPU bodies against their CPU bodies, gradient checks in
#      GPU mode; the Gpu and Cudnn suites; the context and SyncedMemory), in
#      parallel shards;
#   2. trains LeNet on Fashion-MNIST (2,000 iterations, random_seed 1701) on
#      the GPU and on the CPU, and compares their final test accuracies;
#   3. times a force_backward training step of AlexNet (batch 64) and
#      ResNet-50 (batch 32) with `crema time --gpu=0`, every layer on its CUDA
#      body (engine CAFFE) and with engine DEFAULT (cuDNN where built), and the
#      same nets, batch and precision in PyTorch on the same GPU
#      (scripts/bench/big_nets_pytorch.py --device cuda); ROUNDS (default 2)
#      alternating rounds, medians.
# TF32 is off for both (NVIDIA_TF32_OVERRIDE=0; PyTorch's allow_tf32 False;
# Crema's cuDNN convolutions compute in FMA arithmetic): plain float32.
#
# RESULTS_DIR gets summary.md (the tables) and logs.tar.gz (every log).
# Where no CUDA device answers, or with --dry, or with a CPU-only bundle
# (bundle.sh --cpu-only), the GPU parts say they were skipped and the rest
# runs: the tests (which skip), LeNet on the CPU. Exit status: 0 when every
# part that ran passed, 1 otherwise.
#
# Knobs (environment): LENET_ITERATIONS (2000), ROUNDS (2), TIME_ITERATIONS
# (20), SHARDS (test processes, default: cores / 2, at most 8).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dry=0
[[ ${1:-} == --dry ]] && { dry=1; shift; }
(($# == 2)) || { echo "usage: scripts/gpu/check.sh [--dry] ARCHIVE RESULTS_DIR" >&2; exit 2; }
archive=$(realpath "$1")
mkdir -p "$2" || exit 2
results=$(realpath "$2")
lenet_iterations=${LENET_ITERATIONS:-2000}
rounds=${ROUNDS:-2}
time_iterations=${TIME_ITERATIONS:-20}
cores=$(nproc)
shards=${SHARDS:-$(((cores / 2) > 8 ? 8 : ((cores / 2) > 0 ? cores / 2 : 1)))}
start=$(date +%s)
export NVIDIA_TF32_OVERRIDE=0 GLOG_logtostderr=1

work=$(mktemp -d /tmp/crema_gpu_check_XXXXXX)
logs=$work/logs
mkdir -p "$logs"
summary=$results/summary.md
failures=0
say() { echo "$*" | tee -a "$summary"; }
fail() { say "FAILED: $*"; failures=$((failures + 1)); }
finish() {
  tar -C "$work" -czf "$results/logs.tar.gz" logs
  say ""
  say "check.sh: $failures failure(s), $(($(date +%s) - start)) s; logs in $results/logs.tar.gz"
  rm -rf "$work"
  exit $((failures > 0))
}
: >"$summary"

# ---- Unpack and find the libraries --------------------------------------------
tar -C "$work" -xf "$archive" || { fail "cannot unpack $archive"; finish; }
bundle=$work/crema-gpu
say "# Crema GPU check, $(date -u +%Y-%m-%d) on $(uname -n)"
say ""
say '```'
sed 's/^/bundle: /' "$bundle/MANIFEST" | tee -a "$summary"
say "checkout: $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)"
say '```'

# The CUDA libraries the bundle leaves to the machine: those the loader does
# not find already are looked for in the CUDA toolkit and Python's packages.
library_path=$bundle/lib
missing_libraries() {
  LD_LIBRARY_PATH=$library_path ldd "$bundle/bin/crema_tests" | awk '/not found/ {print $1}' | sort -u
}
search_roots=(/usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets /usr/local/lib
              /usr/lib /opt)
for python in python3 /opt/torch/.venv/bin/python3; do
  command -v "$python" >/dev/null 2>&1 || continue
  while read -r site; do search_roots+=("$site/nvidia"); done < <(
    "$python" -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null)
done
for library in $(missing_libraries); do
  found=$(find "${search_roots[@]}" -name "$library" \( -type f -o -type l \) 2>/dev/null | head -n 1)
  [[ -n $found ]] && library_path=$library_path:$(dirname "$found")
done
still_missing=$(missing_libraries | tr '\n' ' ')
crema_env() { LD_LIBRARY_PATH=$library_path "$@"; }
if [[ -n $still_missing ]]; then
  fail "libraries not found on this machine: $still_missing"
  finish
fi

# ---- The machine ----------------------------------------------------------------
{ nvidia-smi 2>&1 || echo "nvidia-smi: not here"; } | tee "$logs/nvidia-smi.log"
crema_env "$bundle/bin/crema" device_query 2>&1 | tee "$logs/device_query.log"
devices=$(sed -n 's/.*CUDA devices: \([0-9]*\).*/\1/p' "$logs/device_query.log" | head -n 1)
gpu=1
if ((dry)); then
  gpu=0 why="--dry"
elif grep -q '^cuda off' "$bundle/MANIFEST"; then
  gpu=0 why="a CPU-only bundle"
elif ((${devices:-0} == 0)); then
  gpu=0 why="no CUDA device answers"
fi
say ""
say "## Machine"
say '```'
grep -m1 -E 'NVIDIA-SMI|not here' "$logs/nvidia-smi.log" | tee -a "$summary"
grep -E 'CUDA devices|Name:|cuDNN|No CUDA' "$logs/device_query.log" | sed 's/^.*\] //' |
  tee -a "$summary"
say "cores: $cores; library path: $library_path"
say '```'
((gpu)) || say "GPU parts skipped: $why"

# ---- 1. The GPU tests -----------------------------------------------------------
# Suites whose type is a GPU device, or named for the GPU or cuDNN, and the
# two whose CUDA build differs from the CPU one (the context, host/device memory).
crema_env "$bundle/bin/crema_tests" --gtest_list_tests >"$logs/test_list.txt" 2>/dev/null
filter=$(awk '/^[^ ]/ { suite = $1; sub(/\.$/, "", suite)
                        if ($0 ~ /GPUDevice/ || suite ~ /Gpu|GPU|Cudnn/ ||
                            suite ~ /^(ContextTest|SyncedMemoryTest)$/) print suite ".*" }' \
           "$logs/test_list.txt" | paste -sd: -)
say ""
say "## GPU tests"
pids=()
for ((shard = 0; shard < shards; ++shard)); do
  (cd "$work" && GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard timeout 300 \
    env LD_LIBRARY_PATH="$library_path" "$bundle/bin/crema_tests" --gtest_filter="$filter" \
    --gtest_output="json:$logs/tests_$shard.json" >"$logs/tests_$shard.log" 2>&1) &
  pids+=($!)
done
test_status=0
for pid in "${pids[@]}"; do wait "$pid" || test_status=1; done
# Sums the shards' reports into the summary; fails on a failed test or a
# shard that wrote no report (a crash or the time limit).
python3 - "$logs" "$shards" >"$work/tests.md" <<'EOF' || fail "GPU tests"
import json, os, sys
logs, shards = sys.argv[1], int(sys.argv[2])
ran = passed = skipped = 0
failed, unreported = [], []
for shard in range(shards):
    path = os.path.join(logs, f"tests_{shard}.json")
    if not os.path.exists(path):
        unreported.append(shard)
        continue
    for suite in json.load(open(path)).get("testsuites", []):
        for test in suite.get("testsuite", []):
            if test.get("status") != "RUN":
                continue
            ran += 1
            name = f"{suite['name']}.{test['name']}"
            if test.get("failures"):
                failed.append(name)
            elif test.get("result") == "SKIPPED":
                skipped += 1
            else:
                passed += 1
print(f"{ran} GPU tests in {shards} shards: {passed} passed, {len(failed)} failed, "
      f"{skipped} skipped")
for name in failed:
    print(f"- failed: {name}")
for shard in unreported:
    print(f"- shard {shard} wrote no report (crashed or timed out): see tests_{shard}.log")
sys.exit(1 if failed or unreported else 0)
EOF
tee -a "$summary" <"$work/tests.md"
if ((test_status != 0)) && ! grep -q -- '- failed\|no report' "$work/tests.md"; then
  fail "a test shard exited non-zero without a failed test (see tests_*.log)"
fi

# ---- 2. LeNet on the GPU and the CPU ----------------------------------------------
say ""
say "## LeNet, Fashion-MNIST, $lenet_iterations iterations"
data=$work/data
mkdir -p "$data"
for split in train:train t10k:test; do
  crema_env "$bundle/bin/convert_mnist_data" --backend=lmdb "$bundle/data/${split%%:*}-images-idx3-ubyte" \
    "$bundle/data/${split%%:*}-labels-idx1-ubyte" "$data/fashion_${split##*:}_lmdb" \
    >>"$logs/convert.log" 2>&1 || fail "convert_mnist_data ${split%%:*}"
done
sed -e "s|data/fashion_mnist/|$data/|" "$repo/models/lenet/lenet_train_test.prototxt" \
  >"$work/lenet_train_test.prototxt"
sed -e "s|^net:.*|net: \"$work/lenet_train_test.prototxt\"|" \
    -e "s|^max_iter:.*|max_iter: $lenet_iterations|" \
    -e "s|^test_interval:.*|test_interval: $lenet_iterations|" \
    -e "s|^snapshot:.*|snapshot: 0|" \
    -e "s|^snapshot_prefix:.*|snapshot_prefix: \"$work/lenet\"|" \
    "$repo/models/lenet/lenet_solver.prototxt" >"$work/lenet_solver.prototxt"
printf 'random_seed: 1701\ntest_initialization: false\nsnapshot_after_train: false\n' >>"$work/lenet_solver.prototxt"
lenet() {  # LOG [FLAGS...]: trains, prints the final test accuracy
  local log=$1
  shift
  (cd "$work" && timeout 300 env LD_LIBRARY_PATH="$library_path" "$bundle/bin/crema" train \
    --solver="$work/lenet_solver.prototxt" "$@") >"$log" 2>&1
  grep 'Test net output #0: accuracy' "$log" | tail -n 1 | sed 's/.*accuracy = //'
}
t0=$(date +%s)
cpu_accuracy=$(lenet "$logs/lenet_cpu.log")
say "CPU: accuracy ${cpu_accuracy:-none} ($(($(date +%s) - t0)) s with start-up and the test)"
[[ -n $cpu_accuracy ]] || fail "LeNet on the CPU gave no accuracy (logs/lenet_cpu.log)"
if ((gpu)); then
  t0=$(date +%s)
  gpu_accuracy=$(lenet "$logs/lenet_gpu.log" --gpu=0)
  say "GPU: accuracy ${gpu_accuracy:-none} ($(($(date +%s) - t0)) s with start-up and the test)"
  if [[ -z $gpu_accuracy || -z $cpu_accuracy ]]; then
    fail "LeNet on the GPU gave no accuracy (logs/lenet_gpu.log)"
  elif ! awk -v g="$gpu_accuracy" -v c="$cpu_accuracy" \
      'BEGIN { d = g - c; if (d < 0) d = -d; exit !(g >= 0.87 && d <= 0.01) }'; then
    fail "LeNet GPU accuracy $gpu_accuracy: needs >= 0.87 and within 0.01 of the CPU's $cpu_accuracy"
  fi
else
  say "GPU: skipped"
fi

# ---- 3. Training-step timings -------------------------------------------------------
say ""
say "## Training step (forward + backward, every gradient), ms"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
if ((gpu)); then
  say ""
  say "| net | batch | Crema CUDA | Crema cuDNN | PyTorch | images/s cuDNN | images/s PyTorch | cuDNN / CUDA | PyTorch / Crema cuDNN |"
  say "|---|---|---|---|---|---|---|---|---|"
  for spec in alexnet:64 resnet50:32; do
    net=${spec%%:*} batch=${spec##*:}
    python3 "$repo/models/$net/make_$net.py" --batch "$batch" "$work/$net.prototxt"
    sed -i '1i force_backward: true' "$work/$net.prototxt"
    for engine in CAFFE DEFAULT; do
      python3 "$repo/scripts/bench/set_engine.py" "$work/$net.prototxt" \
        "$work/${net}_$engine.prototxt" "$engine" "$work/types"
    done
    cuda_runs=() cudnn_runs=() torch_runs=()
    for ((round = 1; round <= rounds; ++round)); do
      for engine in CAFFE DEFAULT; do
        log=$logs/time_${net}_${engine}_$round.log
        crema_env timeout 240 "$bundle/bin/crema" time --gpu=0 --iterations="$time_iterations" \
          --model="$work/${net}_$engine.prototxt" >"$log" 2>&1 || fail "crema time $net $engine"
        ms=$(sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' "$log")
        [[ $engine == CAFFE ]] && cuda_runs+=("$ms") || cudnn_runs+=("$ms")
      done
      log=$logs/pytorch_${net}_$round.log
      timeout 240 python3 "$repo/scripts/bench/big_nets_pytorch.py" "$net" "$batch" "$cores" \
        "$time_iterations" --device cuda >"$log" 2>&1 || fail "PyTorch $net (see $log)"
      torch_runs+=("$(awk '/pytorch ms:/ {print $3}' "$log")")
    done
    cuda=$(printf '%s\n' "${cuda_runs[@]}" | median)
    cudnn=$(printf '%s\n' "${cudnn_runs[@]}" | median)
    torch=$(printf '%s\n' "${torch_runs[@]}" | median)
    awk -v n="$net" -v b="$batch" -v c="${cuda:-0}" -v d="${cudnn:-0}" -v t="${torch:-0}" '
      function rate(ms) { return ms > 0 ? sprintf("%.0f", 1000 * b / ms) : "-" }
      function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
      BEGIN { printf "| %s | %d | %.2f | %.2f | %.2f | %s | %s | %s | %s |\n", n, b, c, d, t,
              rate(d), rate(t), ratio(c, d), ratio(t, d) }' | tee -a "$summary"
    say "  runs: CUDA ${cuda_runs[*]}; cuDNN ${cudnn_runs[*]}; PyTorch ${torch_runs[*]}"
  done
else
  say "skipped: no GPU"
fi
finish
