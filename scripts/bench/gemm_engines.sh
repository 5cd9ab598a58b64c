#!/usr/bin/env bash
# OpenBLAS against oneDNN's GEMM, one thread, on the GEMM shapes of LeNet's,
# cifar10_quick's and AlexNet's layers (GFLOP/s, best of 3 alternating rounds,
# and the ratio oneDNN/OpenBLAS). Needs libopenblas-dev, libdnnl-dev and cc.
#   scripts/bench/gemm_engines.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d /tmp/crema_bench_gemm_XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -fopenmp -o "$work/gemm_engines" scripts/bench/gemm_engines.c -lopenblas -ldnnl
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
"$work/gemm_engines"
