#!/usr/bin/env bash
# Builds fashion_train_lmdb and fashion_test_lmdb in this folder from the
# Debian package dataset-fashion-mnist (installed by scripts/install_deps.sh).
# Idempotent: databases that already exist are kept.
#   data/fashion_mnist/create_fashion_mnist.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/release}
raw=/usr/share/datasets/fashion-mnist
convert=$build/bin/convert_mnist_data
[[ -x $convert ]] || { echo "create_fashion_mnist: $convert not built (run make)" >&2; exit 1; }
[[ -f $raw/train-images-idx3-ubyte.gz ]] ||
  { echo "create_fashion_mnist: $raw is missing (apt-get install dataset-fashion-mnist)" >&2; exit 1; }

make_db() {  # split name
  local db=$here/fashion_$2_lmdb
  if [[ -f $db/data.mdb ]]; then
    echo "create_fashion_mnist: $db exists"
    return
  fi
  rm -rf "$db.partial"
  GLOG_minloglevel=1 "$convert" --backend=lmdb "$raw/$1-images-idx3-ubyte.gz" \
    "$raw/$1-labels-idx1-ubyte.gz" "$db.partial"
  mv "$db.partial" "$db"  # only a complete database takes the final name
  echo "create_fashion_mnist: wrote $db"
}
make_db train train
make_db t10k test
