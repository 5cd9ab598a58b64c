#!/usr/bin/env bash
# Builds what scripts/gpu/check.sh runs on a GPU machine and packs it into one
# archive: the crema tool, the test binary and convert_mnist_data, the shared
# libraries they load that a bare machine lacks, and the raw Fashion-MNIST
# files (check.sh writes the LMDBs there with the bundled converter).
#
#   scripts/gpu/bundle.sh [--cpu-only] [--build DIR] [--out DIR]
#
# By default it configures and builds build/gpu: CUDA for sm_90
# (CREMA_CUDA_ARCH=90; the H100), cuDNN and NCCL where found, the tests; and
# without Python, ONNX, OpenCV, MPI and oneDNN, whose libraries would only
# make the archive larger (the check needs none of them). --cpu-only builds
# build/gpu-dry the same way without CUDA: a bundle for check.sh's dry run,
# which tests the plumbing where there is no GPU. --build DIR packs an
# existing build tree instead (building only the three binaries there).
#
# Left out of the archive, because the GPU machine has its own: the C
# library and the loader, libstdc++ and libgcc_s, the CUDA driver, and the
# CUDA libraries that its CUDA 13 toolkit and PyTorch's wheels carry
# (cudart, cuBLAS, cuRAND, NCCL, cuDNN). check.sh finds those there.
#
# Writes DIR/crema-gpu.tar.xz (default DIR: build/gpu-bundle, git-ignored)
# and prints its size and contents. A CUDA bundle it builds must fit in 60
# MiB (what a GPU machine takes); a packed --build tree with everything in it
# (OpenCV's, MPI's libraries) is larger, and serves dry runs only. XZ_OPT sets the
# compression (default -6; -0 for a quick dry-run bundle).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
limit_mib=60

cpu_only=0 build="" out=build/gpu-bundle packed_existing=0
while (($#)); do
  case $1 in
    --cpu-only) cpu_only=1 ;;
    --build) build=${2:?--build needs a folder} packed_existing=1; shift ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    *) echo "bundle.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
  shift
done

raw=/usr/share/datasets/fashion-mnist
[[ -f $raw/train-images-idx3-ubyte.gz ]] ||
  { echo "bundle.sh: $raw is missing (scripts/install_deps.sh installs it)" >&2; exit 1; }

if [[ -z $build ]]; then
  ./scripts/install_deps.sh
  build=build/gpu cuda=ON
  ((cpu_only)) && build=build/gpu-dry cuda=OFF
  mkdir -p build
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCREMA_CUDA=$cuda -DCREMA_CUDA_ARCH=90 \
    -DCREMA_BUILD_TESTS=ON -DCREMA_PYTHON=OFF -DCREMA_ONNX=OFF -DCREMA_OPENCV=OFF \
    -DCREMA_MPI=OFF -DCREMA_DNNL=OFF >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
  grep '^-- Crema' "$build.configure.log"
fi
[[ -f $build/CMakeCache.txt ]] || { echo "bundle.sh: $build is not a build tree" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" --target crema_tool crema_tests convert_mnist_data >/dev/null

binaries=(crema crema_tests convert_mnist_data)
stage=$(mktemp -d /tmp/crema_bundle_XXXXXX)
trap 'rm -rf "$stage"' EXIT
bundle=$stage/crema-gpu
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/data"
for binary in "${binaries[@]}"; do cp "$build/bin/$binary" "$bundle/bin/"; done

# Every library the binaries load, but those the GPU machine has (above).
provided='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcurand|libnccl|libcudnn[a-z_]*)\.so'
for binary in "${binaries[@]}"; do
  ldd "$bundle/bin/$binary"
done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
  [[ $name =~ $provided ]] && continue
  cp -L "$path" "$bundle/lib/$name"
done
missing=$(for binary in "${binaries[@]}"; do ldd "$bundle/bin/$binary"; done | grep 'not found' || true)
[[ -z $missing ]] || { echo "bundle.sh: libraries not found here:" >&2; echo "$missing" >&2; exit 1; }

# Raw IDX files: xz packs them smaller than their gzip files are.
for file in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
            t10k-labels-idx1-ubyte; do
  gzip -dc "$raw/$file.gz" >"$bundle/data/$file"
done

# What check.sh reads: whether the build has CUDA and cuDNN (from what the
# library links), and where it came from.
links() { ldd "$build/libcrema.so" | grep -q "$1" && echo on || echo off; }
{
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cuda $(links libcudart)"
  echo "cudnn $(links libcudnn)"
} >"$bundle/MANIFEST"

mkdir -p "$out"
archive=$out/crema-gpu.tar.xz
XZ_OPT=${XZ_OPT:--6} XZ_DEFAULTS="-T0" tar -C "$stage" -cJf "$archive.partial" crema-gpu
mv "$archive.partial" "$archive"
bytes=$(stat -c %s "$archive")

echo "bundle.sh: $archive: $((bytes / 1024 / 1024)) MiB ($bytes bytes); limit $limit_mib MiB"
cat "$bundle/MANIFEST"
echo "contents (uncompressed):"
(cd "$bundle" && du -sh bin lib data | sed 's/^/  /')
echo "  bin: $(ls "$bundle/bin" | tr '\n' ' ')"
echo "  lib: $(ls "$bundle/lib" | wc -l) libraries: $(ls "$bundle/lib" | sed 's/\.so.*//' | tr '\n' ' ')"
# What bundle.sh builds itself with CUDA travels to a GPU machine and must
# fit; a CPU-only bundle, or an existing tree packed (--build), serves dry runs.
if ((bytes > limit_mib * 1024 * 1024)); then
  if grep -q '^cuda on' "$bundle/MANIFEST" && ((!packed_existing)); then
    echo "bundle.sh: the archive is over $limit_mib MiB" >&2
    exit 1
  fi
  echo "bundle.sh: over $limit_mib MiB: for dry runs here, not for a GPU machine"
fi
