"""A small writer of Caffe-style deploy prototxt, shared by the models/make_*
scripts: each call appends one layer in prototxt text, in call order.

Fillers are chosen so that a net without trained weights stays finite (msra
for convolutions, gaussian for inner products); the tests and benchmarks that
need other values set the weights themselves.
"""


def _field(key, value):
    if isinstance(value, bool):
        return f"{key}: {'true' if value else 'false'}"
    if isinstance(value, str) and not value.isupper():
        return f'{key}: "{value}"'
    return f"{key}: {value}"


def params(name, **fields):
    """'name { key: value ... }' with lists written as repeated fields and
    dicts as nested messages; a value None is left out."""
    parts = []
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, dict):
            parts.append(params(key, **value))
        elif isinstance(value, (list, tuple)):
            parts.extend(_field(key, v) for v in value)
        else:
            parts.append(_field(key, value))
    return f"{name} {{ {' '.join(parts)} }}"


class NetWriter:
    def __init__(self, name):
        self.lines = [f'name: "{name}"']

    def layer(self, name, kind, bottoms, tops, *bodies):
        """Appends a layer; bottoms and tops are a name or a list of names."""
        bottoms = [bottoms] if isinstance(bottoms, str) else list(bottoms or [])
        tops = [tops] if isinstance(tops, str) else list(tops)
        self.lines.append("layer {")
        self.lines.append(f'  name: "{name}"')
        self.lines.append(f'  type: "{kind}"')
        self.lines.extend(f'  bottom: "{b}"' for b in bottoms)
        self.lines.extend(f'  top: "{t}"' for t in tops)
        self.lines.extend(f"  {body}" for body in bodies if body)
        self.lines.append("}")
        return tops[0]

    def input(self, name, shape):
        dims = " ".join(f"dim: {d}" for d in shape)
        return self.layer(name, "Input", None, name, f"input_param {{ shape {{ {dims} }} }}")

    def conv(self, name, bottom, num_output, kernel, stride=1, pad=None, group=1, bias=True,
             dilation=1, kind="Convolution"):
        pad = (kernel // 2) * dilation if pad is None else pad
        body = params("convolution_param", num_output=num_output, bias_term=None if bias else False,
                      pad=pad or None, kernel_size=kernel, stride=stride if stride != 1 else None,
                      group=group if group != 1 else None,
                      dilation=dilation if dilation != 1 else None,
                      weight_filler={"type": "msra"},
                      bias_filler={"type": "constant", "value": 0} if bias else None)
        return self.layer(name, kind, bottom, name, body)

    def bn_scale(self, name, bottom):
        """BatchNorm (stored statistics) and Scale with bias, both in place."""
        self.layer(f"{name}/bn", "BatchNorm", bottom, bottom,
                   "batch_norm_param { use_global_stats: true }")
        self.layer(f"{name}/scale", "Scale", bottom, bottom, "scale_param { bias_term: true }")
        return bottom

    def relu(self, name, bottom, kind="ReLU"):
        return self.layer(name, kind, bottom, bottom)

    def pool(self, name, bottom, pool, kernel=None, stride=None, pad=None, global_pooling=False,
             tops=None):
        body = params("pooling_param", pool=pool, kernel_size=kernel, stride=stride, pad=pad,
                      global_pooling=True if global_pooling else None)
        return self.layer(name, "Pooling", bottom, tops or name, body)

    def text(self):
        return "\n".join(self.lines) + "\n"


def write(text, out):
    """Writes text to the file out, or to standard output when out is None."""
    import sys
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def multibox_heads(net, image, sources, num_classes):
    """SSD's multibox heads (Liu et al. 2016, as the SSD fork writes them):
    for each source (blob, min_size, max_size or None, aspect ratios, step or
    None) a 3x3 location and confidence convolution, Permute to NHWC and
    Flatten, and a PriorBox; each kind concatenated into mbox_loc, mbox_conf
    (before the softmax: what MultiBoxLoss takes) and mbox_priorbox."""
    locs, confs, priors = [], [], []
    for blob, min_size, max_size, ratios, step in sources:
        per_cell = 1 + (1 if max_size else 0) + 2 * len(ratios)
        for what, width, names in (("loc", 4, locs), ("conf", num_classes, confs)):
            head = net.conv(f"{blob}_mbox_{what}", blob, per_cell * width, 3)
            perm = net.layer(f"{blob}_mbox_{what}_perm", "Permute", head, f"{head}_perm",
                             params("permute_param", order=[0, 2, 3, 1]))
            names.append(net.layer(f"{blob}_mbox_{what}_flat", "Flatten", perm, f"{head}_flat",
                                   "flatten_param { axis: 1 }"))
        priors.append(net.layer(f"{blob}_mbox_priorbox", "PriorBox", [blob, image],
                                f"{blob}_mbox_priorbox",
                                params("prior_box_param", min_size=min_size, max_size=max_size,
                                       aspect_ratio=list(ratios), flip=True, clip=False,
                                       variance=[0.1, 0.1, 0.2, 0.2], step=step, offset=0.5)))
    net.layer("mbox_loc", "Concat", locs, "mbox_loc", "concat_param { axis: 1 }")
    net.layer("mbox_conf", "Concat", confs, "mbox_conf", "concat_param { axis: 1 }")
    net.layer("mbox_priorbox", "Concat", priors, "mbox_priorbox", "concat_param { axis: 2 }")


def detection_output(net, num_classes, nms_threshold=0.45, top_k=100, keep_top_k=100,
                     confidence_threshold=0.25):
    """The confidences of multibox_heads softmaxed per prior, and
    DetectionOutput (CENTER_SIZE boxes). Returns its top."""
    net.layer("mbox_conf_reshape", "Reshape", "mbox_conf", "mbox_conf_reshape",
              f"reshape_param {{ shape {{ dim: 0 dim: -1 dim: {num_classes} }} }}")
    net.layer("mbox_conf_softmax", "Softmax", "mbox_conf_reshape", "mbox_conf_softmax",
              "softmax_param { axis: 2 }")
    net.layer("mbox_conf_flatten", "Flatten", "mbox_conf_softmax", "mbox_conf_flatten",
              "flatten_param { axis: 1 }")
    return net.layer("detection_out", "DetectionOutput",
                     ["mbox_loc", "mbox_conf_flatten", "mbox_priorbox"], "detection_out",
                     params("detection_output_param", num_classes=num_classes,
                            share_location=True, background_label_id=0,
                            nms_param={"nms_threshold": nms_threshold, "top_k": top_k},
                            code_type="CENTER_SIZE", keep_top_k=keep_top_k,
                            confidence_threshold=confidence_threshold))


def ssd_heads(net, image, sources, num_classes, nms_threshold=0.45, top_k=100, keep_top_k=100,
              confidence_threshold=0.25):
    """multibox_heads and detection_output: a deploy net's SSD end. Returns
    the DetectionOutput's top."""
    multibox_heads(net, image, sources, num_classes)
    return detection_output(net, num_classes, nms_threshold, top_k, keep_top_k,
                            confidence_threshold)


DEPTHWISE_TYPES = ["Convolution", "ConvolutionDepthwise", "DepthwiseConvolution"]


def main(doc, make, size, min_size, batch=True, size_multiple=1, depthwise=None):
    """The command line the make_*.py scripts share,
    [--batch N] [--size S] [--depthwise TYPE] [OUT]: make(batch=, size=,
    depthwise=) (the options the script has) returns the prototxt, written to
    OUT or standard output. batch=False: the net takes one image;
    depthwise: the default type of the depthwise layers, None when the
    script has no such option."""
    import argparse
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if batch:
        parser.add_argument("--batch", type=int, default=1, help="images per pass (default 1)")
    rule = f"at least {min_size}" + (f" and a multiple of {size_multiple}"
                                     if size_multiple > 1 else "")
    parser.add_argument("--size", type=int, default=size,
                        help=f"input height and width, {rule} (default {size})")
    if depthwise:
        parser.add_argument("--depthwise", default=depthwise, choices=DEPTHWISE_TYPES,
                            help=f"the depthwise layers' type (default {depthwise})")
    parser.add_argument("out", nargs="?", help="file to write (default: standard output)")
    options = vars(parser.parse_args())
    out = options.pop("out")
    if options.get("batch", 1) < 1:
        parser.error("--batch must be at least 1")
    if options["size"] < min_size or options["size"] % size_multiple:
        parser.error(f"--size must be {rule}")
    write(make(**options), out)
