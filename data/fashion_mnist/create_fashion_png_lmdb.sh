#!/usr/bin/env bash
# Builds fashion_train_png_lmdb and fashion_test_png_lmdb in this folder: the
# PNG folders of make_png_folders.py (written first if missing) converted by
# convert_imageset --encoded --gray, so each record holds its PNG file's bytes.
# models/lenet_images/lenet_train_test_encoded_lmdb.prototxt reads them.
# Idempotent: databases that already exist are kept.
#   data/fashion_mnist/create_fashion_png_lmdb.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/release}
convert=$build/bin/convert_imageset
[[ -x $convert ]] ||
  { echo "create_fashion_png_lmdb: $convert not built (a build with OpenCV: run make)" >&2; exit 1; }
python3 "$here/make_png_folders.py" "$here/png"

for split in train test; do
  db=$here/fashion_${split}_png_lmdb
  if [[ -f $db/data.mdb ]]; then
    echo "create_fashion_png_lmdb: $db exists"
    continue
  fi
  # convert_imageset writes beside $db and renames into place when complete.
  "$convert" --encoded --gray --backend=lmdb "$here/png/" "$here/png/$split.txt" "$db"
  echo "create_fashion_png_lmdb: wrote $db"
done
