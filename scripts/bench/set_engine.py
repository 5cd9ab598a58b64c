#!/usr/bin/env python3
"""Writes a copy of a net prototxt with every layer that has an engine choice
set to one engine, and a map of layer names to types.

  set_engine.py [--grouped=ENGINE2] IN.prototxt OUT.prototxt ENGINE TYPES.txt [N,C,H,W]

ENGINE: DEFAULT, CAFFE, CUDNN or DNNL (CAFFE in GPU mode: every layer on its
CUDA body); with CAFFE or CUDNN anywhere the copy starts with engine_mode:
AS_WRITTEN, under which those engines choose Crema's bodies. --grouped=ENGINE2 gives grouped convolutions (a Convolution with
group > 1, and the forks' depthwise types) ENGINE2 instead. TYPES.txt gets
"name type" per layer, with a Convolution whose group is its num_output
(a depthwise one) named "Depthwise". With
N,C,H,W the Data layers (a training net's TRAIN and TEST ones) become one
Input layer of tops data (N,C,H,W) and label (N), zero-filled: the benches
time the layers, not a database. Works on the text: top-level `layer { ... }`
blocks, as Caffe's and Crema's model files write them."""
import re
import sys

# The layer types with an engine choice (a oneDNN or a cuDNN twin) and the
# parameter holding their engine.
ENGINE_FIELD = {
    "Convolution": "convolution_param", "Deconvolution": "convolution_param",
    "ConvolutionDepthwise": "convolution_param", "DepthwiseConvolution": "convolution_param",
    "InnerProduct": "inner_product_param", "Pooling": "pooling_param",
    "ReLU": "relu_param", "LRN": "lrn_param", "Softmax": "softmax_param",
    "Eltwise": "eltwise_param", "BatchNorm": "batch_norm_param",
    "Sigmoid": "sigmoid_param", "TanH": "tanh_param",
}


def layer_blocks(text):
    """Yields (start, end) of each top-level `layer {` block."""
    for match in re.finditer(r"^layer\s*\{", text, re.M):
        depth, i = 0, match.end() - 1
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                yield match.start(), i
                break


def group_of(block):
    """The block's convolution group (1 where none is given)."""
    match = re.search(r"\bgroup:\s*(\d+)", block)
    return int(match.group(1)) if match else 1


def main():
    args = sys.argv[1:]
    grouped_engine = None
    if args and args[0].startswith("--grouped="):
        grouped_engine = args.pop(0).split("=", 1)[1]
    source, target, engine, types_path = args[0:4]
    input_dims = args[4].split(",") if len(args) > 4 else None
    text = open(source).read()
    pieces, names, last, input_written = [], [], 0, False
    for start, end in layer_blocks(text):
        block = text[start:end]
        name = re.search(r'\bname:\s*"([^"]+)"', block).group(1)
        kind = re.search(r'\btype:\s*"([^"]+)"', block).group(1)
        if input_dims and kind == "Data":
            block = "" if input_written else (
                'layer {\n  name: "data"\n  type: "Input"\n  top: "data"\n  top: "label"\n'
                "  input_param { shape { " + " ".join(f"dim: {d}" for d in input_dims) +
                f" }} shape {{ dim: {input_dims[0]} }} }}\n}}")
            name, kind, input_written = "data", "Input", True
        outputs = re.search(r"\bnum_output:\s*(\d+)", block)
        depthwise = kind in ("ConvolutionDepthwise", "DepthwiseConvolution") or (
            kind == "Convolution" and group_of(block) > 1 and outputs and
            group_of(block) == int(outputs.group(1)))
        names.append(f"{name} {'Depthwise' if depthwise else kind}")
        field = ENGINE_FIELD.get(kind)
        layer_engine = engine
        if grouped_engine and (depthwise or (kind == "Convolution" and group_of(block) > 1)):
            layer_engine = grouped_engine
        if field:
            block = re.sub(r"\n\s*engine:\s*\w+", "", block)
            block = re.sub(r"\bengine:\s*\w+\s*", "", block)
            if re.search(rf"\b{field}\s*\{{", block):
                block = re.sub(rf"\b{field}\s*\{{", f"{field} {{ engine: {layer_engine}", block,
                               count=1)
            else:
                block = block[:-1].rstrip() + f"\n  {field} {{ engine: {layer_engine} }}\n}}"
        pieces.append(text[last:start] + block)
        last = end
    # Engines naming Caffe's runtimes (CAFFE, CUDNN) choose a body only
    # where the net asks for them as written.
    mode = "engine_mode: AS_WRITTEN\n" if {engine, grouped_engine} & {"CAFFE", "CUDNN"} else ""
    open(target, "w").write(mode + "".join(pieces) + text[last:])
    open(types_path, "w").write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
