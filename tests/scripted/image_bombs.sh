#!/usr/bin/env bash
# Images that are small on disk and bad to decode (tests/scripted/
# make_bad_images.py: a JPEG and a PNG whose headers claim 30000 x 30000
# pixels, a JPEG and a PNG cut short) through every path that decodes images:
# convert_imageset, compute_image_mean (an encoded record), crema classify,
# an ImageData and a Data layer (crema time) and pycaffe's load_image. Each
# must exit 1 with an error naming the file or record, below 256 MiB of peak
# memory (/usr/bin/time -v); the good images still decode.
#   image_bombs.sh CREMA CONVERT_IMAGESET COMPUTE_IMAGE_MEAN SOURCE_DIR BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib.sh"
crema=$(realpath "$1") convert=$(realpath "$2") mean=$(realpath "$3")
source=$(realpath "$4") build=$(realpath "$5")
work=$(mktemp -d /tmp/crema_image_bombs_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
limit=256
export GLOG_minloglevel=0

python3 "$source/tests/scripted/make_bad_images.py" images ||
  { echo "FAIL: make_bad_images.py"; exit 1; }

# convert_imageset: the good images convert; each bad one is refused by name
# and leaves no database.
printf 'small.jpg 0\nsmall.png 1\n' >good.txt
"$convert" images/ good.txt good_lmdb >good.log 2>&1 ||
  { echo "FAIL: convert_imageset of the good images"; tail -5 good.log; exit 1; }
for bad in header_bomb.jpg header_bomb.png truncated.jpg truncated.png; do
  case $bad in
    header_bomb*) text="images/$bad: an image of 30000 x 30000 = 900000000 pixels, above the limit" ;;
    truncated*) text="images/$bad: not a whole" ;;
  esac
  printf 'small.jpg 0\n%s 1\n' "$bad" >"$bad.txt"
  expect_bounded_error "convert_imageset $bad" "$text" $limit "$convert" images/ "$bad.txt" "$bad.lmdb"
  [[ ! -e $bad.lmdb ]] || { echo "FAIL convert_imageset $bad left $bad.lmdb"; failures=$((failures + 1)); }
done

# An encoded record that claims 30000 x 30000: small.jpg converted, then its
# frame header rewritten in the database file.
printf 'small.jpg 0\n' >small.txt
"$convert" --encoded --gray images/ small.txt bomb_lmdb >bomb.log 2>&1 &&
  python3 "$source/tests/scripted/make_bad_images.py" --patch-lmdb bomb_lmdb/data.mdb >>bomb.log ||
  { echo "FAIL: making the LMDB with the header bomb"; tail -5 bomb.log; exit 1; }
expect_bounded_error "compute_image_mean record" "bomb_lmdb: record '00000000_small.jpg': an image of 30000 x 30000" \
  $limit "$mean" bomb_lmdb bomb_mean.binaryproto

# The layers: ImageData reading the files, Data reading the record.
for bad in header_bomb.jpg truncated.jpg; do
  cat >"imagedata_$bad.prototxt" <<NET
layer { name: "data" type: "ImageData" top: "data" top: "label"
        image_data_param { source: "$bad.txt" root_folder: "images/" batch_size: 2 } }
NET
  expect_bounded_error "ImageData layer $bad" "images/$bad" $limit \
    "$crema" time --model="imagedata_$bad.prototxt" --iterations=1
done
cat >data.prototxt <<'NET'
layer { name: "data" type: "Data" top: "data" top: "label"
        data_param { source: "bomb_lmdb" backend: LMDB batch_size: 1 } }
NET
expect_bounded_error "Data layer record" "an image of 30000 x 30000" $limit \
  "$crema" time --model=data.prototxt --iterations=1

# crema classify: a net on 64 x 64 colour images with weights from a
# zero-iteration run.
cat >deploy.prototxt <<'NET'
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 dim: 64 dim: 64 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 2 } }
layer { name: "prob" type: "Softmax" bottom: "ip" top: "prob" }
NET
cat >train.prototxt <<'NET'
layer { name: "data" type: "DummyData" top: "data" top: "label"
        dummy_data_param { shape { dim: 1 dim: 3 dim: 64 dim: 64 } shape { dim: 1 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
NET
printf 'net: "train.prototxt"\nbase_lr: 0.01\nlr_policy: "fixed"\nmax_iter: 0\nsnapshot_prefix: "tiny"\n' >solver.prototxt
"$crema" train --solver=solver.prototxt >train.log 2>&1 ||
  { echo "FAIL: the zero-iteration run for classify's weights"; tail -5 train.log; exit 1; }
"$crema" classify --model=deploy.prototxt --weights=tiny_iter_0.caffemodel \
  --images=images/small.jpg >classify_good.log 2>&1 ||
  { echo "FAIL: crema classify of the good image"; tail -5 classify_good.log; failures=$((failures + 1)); }
for bad in header_bomb.jpg truncated.jpg header_bomb.png truncated.png; do
  expect_bounded_error "classify $bad" "images/$bad" $limit "$crema" classify \
    --model=deploy.prototxt --weights=tiny_iter_0.caffemodel --images=images/small.jpg,images/$bad
done

# pycaffe's crema.io.load_image, where the Python module is built
# (CREMA_PYTHON: the interpreter it is built for).
if [[ -f $build/python/crema/__init__.py && -n ${CREMA_PYTHON:-} ]]; then
  for bad in header_bomb.jpg truncated.png; do
    expect_bounded_error "crema.io.load_image $bad" "images/$bad" $limit env PYTHONPATH="$build/python" \
      "$CREMA_PYTHON" -c "import sys, crema.io
try:
    crema.io.load_image('images/$bad')
except (IOError, RuntimeError) as error:
    sys.exit(print(error) or 1)"
  done
fi

((failures == 0)) || { echo "$failures case(s) failed"; exit 1; }
echo "every decoding path refused the bad images, each below $limit MiB"
