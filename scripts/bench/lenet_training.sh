# Sourced by the benchmarks that time LeNet training through `crema train`
# (encoded_lmdb.sh, python_step.sh).

# Writes FILE: a solver over NET for ITERATIONS iterations, with models/lenet's
# learning settings, a display line every 100 iterations, no test pass and no
# snapshot (only training is timed).
write_lenet_bench_solver() {  # FILE NET ITERATIONS
  cat >"$1" <<SOLVER
net: "$2"
test_iter: 1
test_interval: 100000000
test_initialization: false
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 100
max_iter: $3
snapshot_after_train: false
random_seed: 1
solver_mode: CPU
SOLVER
}

# Images/s of a `crema train` log at batch BATCH: the mean of its
# `Iteration N (x iter/s ...)` lines after the first (start-up excluded).
log_images_per_second() {  # LOG BATCH
  sed -n 's/.*Iteration [0-9]* (\([0-9.]*\) iter\/s.*/\1/p' "$1" | tail -n +2 |
    awk -v batch="$2" '{ sum += $1; n++ } END { if (n) printf "%.1f\n", batch * sum / n }'
}

# Prints "  LABEL  median  (min-max)" of the rates given as arguments and sets
# the global `median_rate` to the median (median() comes from pytorch_setup.sh).
print_median_with_range() {  # LABEL RATE...
  local label=$1
  shift
  local sorted
  sorted=$(printf '%s\n' "$@" | sort -g)
  median_rate=$(median <<<"$sorted")
  printf '  %-8s %8.1f  (%s-%s)\n' "$label" "$median_rate" "$(head -n1 <<<"$sorted")" \
    "$(tail -n1 <<<"$sorted")"
}
