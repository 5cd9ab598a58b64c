#!/usr/bin/env bash
# A C++ program built against an installed Crema alone. Installs BUILD_DIR
# into a temporary prefix; builds examples/cpp_classification in a temporary
# folder with find_package(Crema) and checks that it compiles against the
# prefix only (no include folder of the source or build tree); runs it on
# LeNet trained here (models/lenet, 300 iterations over the Fashion-MNIST
# test images, fixed seed) and the first Fashion-MNIST test image (an ankle boot,
# label 9) given as raw bytes and, in builds with OpenCV, as a PNG: three
# lines `<probability> - "<label>"`, descending, the first "Ankle boot", the
# same for both. A run with missing weights must exit with 1 and name the
# file. Last, a one-file program compiled with `pkg-config --cflags --libs
# crema` builds a net and runs. Programs run without LD_LIBRARY_PATH: they
# find libcrema.so through their run path.
#   install_consumer.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
build=$(realpath "$1") source=$(realpath "$2")
cmake=${CMAKE_COMMAND:-cmake}
deploy=$source/models/lenet/deploy.prototxt
labels=$source/examples/cpp_classification/fashion_mnist_labels.txt
raw=${CREMA_FASHION_MNIST_RAW:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d /tmp/crema_install_consumer_XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
unset LD_LIBRARY_PATH

fail() {
  echo "FAIL: $*"
  exit 1
}

# Weights to classify with, trained by the build's own tool.
make_test_lmdb "$build/bin/convert_mnist_data" "$work/test_lmdb"
lenet_net "$source" "$work/test_lmdb" "$work/net.prototxt"
sed -e "s#^net:.*#net: \"$work/net.prototxt\"#" -e 's#^max_iter:.*#max_iter: 300#' \
    -e 's#^test_interval:.*#test_interval: 300#' -e 's#^test_iter:.*#test_iter: 1#' \
    -e 's#^snapshot:.*#snapshot: 0#' -e "s#^snapshot_prefix:.*#snapshot_prefix: \"$work/lenet\"#" \
    "$source/models/lenet/lenet_solver.prototxt" >"$work/solver.prototxt"
echo 'random_seed: 1' >>"$work/solver.prototxt"
"$build/bin/crema" train --solver="$work/solver.prototxt" >"$work/train.log" 2>&1 ||
  { tail -20 "$work/train.log"; fail "training the weights to classify with"; }
weights=$work/lenet_iter_300.caffemodel
[[ -f $weights ]] || fail "training wrote no $weights"

# The install and what the consumer needs from it.
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { tail -20 "$work/install.log"; fail "cmake --install"; }
for file in lib/libcrema.so include/crema/net.hpp include/crema/proto/crema.pb.h \
  lib/cmake/Crema/CremaConfig.cmake lib/cmake/Crema/CremaConfigVersion.cmake \
  lib/cmake/Crema/CremaTargets.cmake lib/pkgconfig/crema.pc; do
  [[ -f $prefix/$file ]] || fail "the install has no $file"
done

# The example, configured and built outside the source tree.
"$cmake" -S "$source/examples/cpp_classification" -B "$work/example" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 ||
  { tail -20 "$work/configure.log"; fail "configuring the example"; }
"$cmake" --build "$work/example" >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; fail "building the example"; }
flags=$work/example/CMakeFiles/classification.dir/flags.make
if grep -e "$source/include" -e "$build/include" "$flags"; then
  fail "the example compiled against Crema's source or build tree, not the prefix"
fi
classification=$work/example/classification

# The first test image: 28 x 28 grey bytes, and the same as a PNG.
python3 - "$source/data/fashion_mnist" "$raw" "$work" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from make_png_folders import grey_png, read_idx
raw, work = sys.argv[2], sys.argv[3]
(_, height, width), images = read_idx(os.path.join(raw, "t10k-images-idx3-ubyte.gz"), 2051)
pixels = images[:height * width]
with open(os.path.join(work, "image.raw"), "wb") as f:
    f.write(pixels)
with open(os.path.join(work, "image.png"), "wb") as f:
    f.write(grey_png(pixels, height, width))
PY

# classify: exit status 0, three lines `p - "label"` descending, top-1 the boot.
classify() {  # OUT IMAGE [OPTION...]
  local out=$1 image=$2 status=0
  shift 2
  "$classification" --scale=0.00390625 --top_k=3 "$@" "$deploy" "$weights" "$labels" "$image" \
    >"$out" 2>"$out.err" || status=$?
  ((status == 0)) || { cat "$out.err"; fail "classification of $image exited with $status"; }
  cat "$out"
  awk -v k=3 '
    { if ($0 !~ /^[01]\.[0-9][0-9][0-9][0-9] - ".+"$/) { print "FAIL: line " NR " is not <p> - \"<label>\": " $0; bad = 1 }
      p = $1 + 0
      if (NR > 1 && p > previous) { print "FAIL: probabilities not descending"; bad = 1 }
      previous = p }
    NR == 1 && $0 !~ /"Ankle boot"$/ { print "FAIL: top-1 is not \"Ankle boot\""; bad = 1 }
    END { if (NR != k) { print "FAIL: " NR " lines, not " k; bad = 1 }; exit bad }' "$out"
}
classify "$work/raw.out" "$work/image.raw" --raw
if grep -q CREMA_OPENCV "$prefix/lib/cmake/Crema/CremaTargets.cmake"; then
  classify "$work/png.out" "$work/image.png"
  cmp -s "$work/raw.out" "$work/png.out" || fail "the PNG and the raw bytes classify differently"
fi

# Missing weights: exit status 1 and the file's name.
status=0
"$classification" --raw "$deploy" "$work/missing.caffemodel" "$labels" "$work/image.raw" \
  >"$work/missing.out" 2>"$work/missing.err" || status=$?
cat "$work/missing.err"
((status == 1)) || fail "missing weights: exit status $status, not 1"
grep -q "missing.caffemodel" "$work/missing.err" || fail "missing weights: the message names no file"

# pkg-config: a one-file program, through the umbrella header crema/crema.hpp,
# that builds a net from a NetParameter.
cat >"$work/app.cpp" <<'CPP'
#include <iostream>

#include "crema/crema.hpp"

int main() {
  crema::NetParameter param;
  param.set_name("from_pkg_config");
  crema::LayerParameter* input = param.add_layer();
  input->set_name("data");
  input->set_type("Input");
  input->add_top("data");
  input->mutable_input_param()->add_shape()->add_dim(2);
  crema::Net<float> net(param);
  std::cout << net.name() << " " << net.layers().size() << std::endl;
  return 0;
}
CPP
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046  # the flags are words
"${CXX:-c++}" -std=c++17 "$work/app.cpp" -o "$work/app" $(pkg-config --cflags --libs crema) \
  >"$work/app.log" 2>&1 || { tail -20 "$work/app.log"; fail "compiling with pkg-config's flags"; }
[[ $("$work/app" 2>/dev/null) == "from_pkg_config 1" ]] || fail "the pkg-config program printed otherwise"
echo "OK: installed, built the example against the prefix, classified, failed cleanly, pkg-config"
