#!/usr/bin/env bash
# `crema detect` with models/mobilenet_ssd and random weights (filled by
# `crema train` at max_iter 0), its DetectionOutput's confidence_threshold
# lowered to 0.01 so that
# every image keeps boxes, on two pictures written here (a PNG and a PPM of
# other sizes than the net's 300x300, listed in a .txt file). Checks:
#  - every stdout line is a JSON object {image, label, name, score, box}; the
#    image one of those given; the label a VOC foreground label and the name
#    the label map's; the score in [threshold, 1]; the box
#    xmin <= xmax, ymin <= ymax inside the image's pixels; each image has
#    detections (at threshold 0 every prior's best class passes 0.01);
#  - --threshold=0.15 prints the lines of the threshold-0 run scoring 0.15 or
#    more, no other (and drops some);
#  - --output_dir holds one PNG per image, of the image's size, and no
#    temporary file;
#  - bad input (a missing image, a missing or malformed label map, a net whose
#    last output is not 1 x 1 x N x 7, a threshold outside [0, 1], a bad
#    --mean_value, two images drawn under one name) exits 1 with one error
#    naming the file or flag.
#   detect_mobilenet_ssd.sh CREMA SOURCE_DIR
set -euo pipefail
crema=$(realpath "$1") source=$(realpath "$2")
work=$(mktemp -d /tmp/crema_detect_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
labelmap=$source/examples/detect/labelmap_voc.prototxt

fail() {  # MESSAGE [LOG]
  echo "FAIL: $1"
  if [[ -n ${2:-} ]]; then tail -15 "$2"; fi
  exit 1
}

sed -e 's/confidence_threshold: 0.25/confidence_threshold: 0.01/' \
  -e 's/keep_top_k: 100/keep_top_k: 20/' \
  "$source/models/mobilenet_ssd/mobilenet_ssd_deploy.prototxt" >net.prototxt
grep -q 'confidence_threshold: 0.01' net.prototxt && grep -q 'keep_top_k: 20' net.prototxt ||
  fail "models/mobilenet_ssd's DetectionOutput no longer has the thresholds this check rewrites"
cat >solver.prototxt <<'SOLVER'
net: "net.prototxt"
base_lr: 0 lr_policy: "fixed" max_iter: 0 display: 0
snapshot_prefix: "random" random_seed: 1
SOLVER
"$crema" train --solver=solver.prototxt >train.log 2>&1 ||
  fail "crema train (random weights)" train.log
[[ -s random_iter_0.caffemodel ]] || fail "no random_iter_0.caffemodel" train.log

# Two pictures of shapes on a plain background: shapes.png 320x240 (written
# with zlib alone) and other.ppm 200x260; the list's second line has a label,
# which is ignored.
python3 - <<'PY'
import struct, zlib

def picture(width, height):
    pixels = [[(235, 225, 210)] * width for _ in range(height)]  # BGR
    for y in range(height):
        for x in range(width):
            if width // 10 <= x < width // 3 and height // 8 <= y < height // 2:
                pixels[y][x] = (40, 40, 200)
            cx, cy, r = 2 * width // 3, 2 * height // 3, min(width, height) // 5
            if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
                pixels[y][x] = (40, 160, 40)
    return pixels

def png(pixels):
    def chunk(kind, payload):
        return (struct.pack(">I", len(payload)) + kind + payload +
                struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))
    height, width = len(pixels), len(pixels[0])
    rows = b"".join(b"\x00" + bytes(v for b, g, r in row for v in (r, g, b)) for row in pixels)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) +
            chunk(b"IEND", b""))

def ppm(pixels):
    height, width = len(pixels), len(pixels[0])
    body = bytes(v for row in pixels for b, g, r in row for v in (r, g, b))
    return b"P6\n%d %d\n255\n" % (width, height) + body

open("shapes.png", "wb").write(png(picture(320, 240)))
open("other.ppm", "wb").write(ppm(picture(200, 260)))
open("list.txt", "w").write("shapes.png\nother.ppm 3\n")
PY

detect() {  # OUT LOG FLAGS...: runs crema detect on net.prototxt and the random weights
  local out=$1 log=$2
  shift 2
  "$crema" detect --model=net.prototxt --weights=random_iter_0.caffemodel \
    --mean_value=127.5 --scale=0.007843 "$@" >"$out" 2>"$log"
}
detect all.jsonl all.log --images=list.txt --threshold=0 --labelmap="$labelmap" \
  --output_dir=drawn || fail "crema detect --threshold=0" all.log
detect high.jsonl high.log --images=list.txt --threshold=0.15 --labelmap="$labelmap" ||
  fail "crema detect --threshold=0.15" high.log
head -3 all.jsonl

python3 - "$labelmap" <<'PY' || exit 1
import json, re, struct, sys

names = dict((int(label), name) for label, name in re.findall(
    r'label:\s*(\d+)\s*display_name:\s*"([^"]*)"', open(sys.argv[1]).read()))
sizes = {"shapes.png": (320, 240), "other.ppm": (200, 260)}
failures = []

def lines(path, threshold):
    parsed = []
    for number, text in enumerate(open(path), 1):
        where = "%s line %d" % (path, number)
        try:
            d = json.loads(text)
        except ValueError as e:
            failures.append("%s is not JSON (%s): %s" % (where, e, text.strip()))
            continue
        if sorted(d) != ["box", "image", "label", "name", "score"]:
            failures.append("%s has keys %s" % (where, sorted(d)))
            continue
        width, height = sizes.get(d["image"], (None, None))
        xmin, ymin, xmax, ymax = d["box"]
        if width is None:
            failures.append("%s: image %r was not given" % (where, d["image"]))
        elif not (0 <= xmin <= xmax <= width and 0 <= ymin <= ymax <= height):
            failures.append("%s: box %s outside the %dx%d image" % (where, d["box"], width, height))
        if not (isinstance(d["label"], int) and 1 <= d["label"] <= 20):
            failures.append("%s: label %r is not a VOC foreground label" % (where, d["label"]))
        elif d["name"] != names[d["label"]]:
            failures.append("%s: name %r, the label map says %r" % (where, d["name"],
                                                                    names[d["label"]]))
        if not threshold <= d["score"] <= 1:
            failures.append("%s: score %r outside [%g, 1]" % (where, d["score"], threshold))
        parsed.append(d)
    return parsed

every, high = lines("all.jsonl", 0.0), lines("high.jsonl", 0.15)
for image in sizes:
    if not any(d["image"] == image for d in every):
        failures.append("no detection in %s at threshold 0" % image)
# Scores print with 4 decimals: 0.1500 may be either side of 0.15.
wanted = [d for d in every if d["score"] > 0.15]
kept = [d for d in high if d["score"] > 0.15]
if len(high) == len(every):
    failures.append("--threshold=0.15 dropped none of %d lines: the check needs lower scores"
                    % len(every))
if wanted != kept or not all(d in every for d in high):
    failures.append("--threshold=0.15 printed %d lines, not the %d of the threshold-0 run "
                    "scoring 0.15 or more" % (len(high), len(wanted)))
for image, (width, height) in sizes.items():
    drawing = "drawn/" + image.rsplit(".", 1)[0] + ".png"
    try:
        head = open(drawing, "rb").read(24)
    except OSError:
        failures.append("no drawing %s" % drawing)
        continue
    if head[:8] != b"\x89PNG\r\n\x1a\n" or struct.unpack(">II", head[16:24]) != (width, height):
        failures.append("%s is not a %dx%d PNG" % (drawing, width, height))
for failure in failures:
    print("FAIL: " + failure)
print("%d detections at threshold 0, %d at 0.15, 2 drawings" % (len(every), len(high)))
sys.exit(1 if failures else 0)
PY
leftovers=$(find drawn -name '*.tmp-*')
[[ -z $leftovers ]] || fail "temporary files left in --output_dir: $leftovers"

# Bad input: exit status 1 and an error line holding TEXT.
expect_error() {  # NAME TEXT FLAGS...
  local name=$1 text=$2 status=0
  shift 2
  "$crema" detect "$@" >bad.out 2>"bad_$name.log" || status=$?
  [[ $status == 1 ]] || fail "$name: exit status $status, not 1" "bad_$name.log"
  grep '^E' "bad_$name.log" | grep -qF -- "$text" ||
    fail "$name: no error line naming '$text'" "bad_$name.log"
  echo "$name: $(grep '^E' "bad_$name.log" | head -1 | sed 's/^[^]]*] //')"
}
cat >conv.prototxt <<'NET'
name: "NoDetections"
layer { name: "data" type: "Input" top: "data"
        input_param { shape { dim: 1 dim: 3 dim: 300 dim: 300 } } }
layer { name: "conv0" type: "Convolution" bottom: "data" top: "conv0"
        convolution_param { num_output: 32 pad: 1 kernel_size: 3 stride: 2 } }
NET
echo 'item { nme: "dog" label: 1 }' >malformed_labelmap.prototxt
run_args=(--model=net.prototxt --weights=random_iter_0.caffemodel)
expect_error missing_image "missing.png: no such image file" "${run_args[@]}" \
  --images=shapes.png,missing.png
expect_error missing_labelmap "--labelmap: absent_labelmap.prototxt" "${run_args[@]}" \
  --images=shapes.png --labelmap=absent_labelmap.prototxt
expect_error malformed_labelmap "--labelmap: malformed_labelmap.prototxt:1" "${run_args[@]}" \
  --images=shapes.png --labelmap=malformed_labelmap.prototxt
expect_error not_detection_output "the last output 'conv0' is 1 32 150 150" \
  --model=conv.prototxt --weights=random_iter_0.caffemodel --images=shapes.png
python3 "$source/tests/scripted/make_bad_images.py" bad_images >/dev/null ||
  fail "make_bad_images.py"
expect_error header_bomb "bad_images/header_bomb.jpg: an image of 30000 x 30000" "${run_args[@]}" \
  --images=shapes.png,bad_images/header_bomb.jpg
expect_error truncated_image "bad_images/truncated.jpg: not a whole JPEG image" "${run_args[@]}" \
  --images=shapes.png,bad_images/truncated.jpg
expect_error threshold_above_1 "--threshold must be in [0, 1], got 1.5" "${run_args[@]}" \
  --images=shapes.png --threshold=1.5
expect_error threshold_below_0 "--threshold must be in [0, 1], got -0.15" "${run_args[@]}" \
  --images=shapes.png --threshold=-0.15
expect_error mean_value_count "--mean_value: 2 values" "${run_args[@]}" \
  --images=shapes.png --mean_value=1,2
expect_error same_drawing "--output_dir: two images would both be written as shapes.png" \
  "${run_args[@]}" --images=shapes.png,shapes.png --output_dir=drawn2
"$crema" help >help.log 2>&1 || fail "crema help" help.log
grep -qx '  detect' help.log || fail "crema help does not list detect" help.log
grep -q -- '-threshold' help.log || fail "crema help does not list --threshold" help.log
echo "crema detect: JSON lines, threshold, drawings and bad input as expected"
