#!/usr/bin/env bash
# A new machine to a working Crema in one command: installs the dependencies,
# builds (with CUDA when nvcc is found), and runs the main job. Until the
# solver lands the main job is `crema device_query`, which shows what this
# build and machine offer.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$(nproc)"
./build/release/bin/crema device_query
