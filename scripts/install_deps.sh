#!/usr/bin/env bash
# Installs every dependency of Crema from Debian packages. Idempotent: when all
# packages are present it only checks (dpkg) and returns in well under a second.
set -euo pipefail

packages=(
  build-essential cmake ccache pkg-config
  libboost-thread-dev libboost-system-dev libboost-random-dev libboost-filesystem-dev libboost-chrono-dev
  libgoogle-glog-dev libgflags-dev
  libprotobuf-dev protobuf-compiler
  libopenblas-dev
  liblmdb-dev libleveldb-dev libsnappy-dev
  libhdf5-dev zlib1g-dev
  libopenmpi-dev openmpi-bin
  libdnnl-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  libonnx-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  python3 python3-numpy python3-matplotlib
  python3-dev pybind11-dev python3-protobuf python3-pytest graphviz
  python3-onnx python3-opencv
  clang libclang-rt-14-dev libomp-14-dev
  dataset-fashion-mnist
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install_deps: done"
