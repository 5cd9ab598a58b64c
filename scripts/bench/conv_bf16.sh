#!/usr/bin/env bash
# oneDNN's convolutions in f32 against bf16 on AlexNet and ResNet-50 shapes,
# forward and both backward passes (scripts/bench/conv_bf16.cpp), 2 threads:
# the gain bf16 mixed precision could bring on this CPU (one with
# avx512_bf16; elsewhere oneDNN emulates bf16 or refuses it).
# Needs libdnnl-dev and a C++ compiler.
#   scripts/bench/conv_bf16.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d /tmp/crema_bench_conv_bf16_XXXXXX)
trap 'rm -rf "$work"' EXIT
c++ -O2 -std=c++17 -o "$work/conv_bf16" scripts/bench/conv_bf16.cpp -ldnnl
grep -q avx512_bf16 /proc/cpuinfo && echo "CPU: avx512_bf16" || echo "CPU: no avx512_bf16"
OMP_NUM_THREADS=2 "$work/conv_bf16"
