#!/usr/bin/env bash
# Installs every dependency of Crema: Debian packages and, with
# --with-onnxruntime (what scripts/test.sh asks for), ONNX Runtime (the npm
# package onnxruntime-node, pinned in scripts/onnxruntime/package-lock.json)
# into build/onnxruntime for the ONNX export tests and the benchmarks; building
# and training need only the packages.
#   install_deps.sh [--with-onnxruntime]
# Idempotent: when everything is present it only checks (dpkg, the installed
# lock) and returns in well under a second.
set -euo pipefail

with_onnxruntime=0
case "${1:-}" in
  --with-onnxruntime) with_onnxruntime=1 ;;
  "") ;;
  *) echo "install_deps: unknown argument '$1' (usage: install_deps.sh [--with-onnxruntime])" >&2
     exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

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
  python3-onnx python3-opencv nodejs
  python3-venv python3-pip python3-setuptools python3-wheel
  time
  clang libclang-rt-14-dev libomp-14-dev
  dataset-fashion-mnist
)

sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"

install_debian_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  # Debian's nodejs comes without npm (NodeSource's includes it).
  command -v npm >/dev/null || missing+=(npm)
  if ((${#missing[@]} == 0)); then
    echo "install_deps: all ${#packages[@]} packages present"
    return
  fi
  echo "install_deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# ONNX Runtime for the export tests (tests/python/onnxruntime_runner.py runs
# scripts/onnxruntime/run.js with it). `npm ci` installs exactly the committed
# lock; installed.lock, a copy of it written when npm ci succeeds, says the
# install is current. --ignore-scripts: the package's postinstall only
# fetches the CUDA provider.
install_onnxruntime() {
  local source="$root/scripts/onnxruntime" target="$root/build/onnxruntime"
  if cmp -s "$source/package-lock.json" "$target/installed.lock"; then
    echo "install_deps: onnxruntime-node present in build/onnxruntime"
    return
  fi
  echo "install_deps: installing onnxruntime-node into build/onnxruntime (about 290 MB)"
  mkdir -p "$target"
  rm -f "$target/installed.lock"
  cp "$source/package.json" "$source/package-lock.json" "$target/"
  (cd "$target" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$source/package-lock.json" "$target/installed.lock"
}

install_debian_packages
((with_onnxruntime)) && install_onnxruntime
echo "install_deps: done"
