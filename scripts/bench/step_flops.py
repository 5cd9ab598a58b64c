#!/usr/bin/env python3
"""The multiply-add work of one training step of a net, in GFLOP.

Usage: step_flops.py BUILD_DIR NET.prototxt
Prints one line: "forward F step S" (GFLOP). The forward pass counts
2 x (inputs per output) for every output of each Convolution, Deconvolution
and InnerProduct layer (grouping included; the forks' depthwise types count
as convolutions); the step counts it three times:
the forward product, the weight gradient and the bottom gradient, which a
net with force_backward computes for every layer, the first one included.
The element-wise layers' work is left out: it is memory traffic, not
arithmetic. Divided by a machine's GEMM peak, S gives the shortest step
that machine could run in that precision (scripts/bench/big_nets_vs_pytorch.sh).
Needs the Python module of BUILD_DIR (target _crema).
"""
import sys


def main():
    build, path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, build + "/python")
    import crema
    from crema.proto import crema_pb2
    from google.protobuf import text_format

    crema.set_mode_cpu()
    net = crema.Net(path, crema.TEST)
    param = crema_pb2.NetParameter()
    with open(path) as f:
        text_format.Merge(f.read(), param)
    forward = 0
    for layer in param.layer:
        if layer.type not in ("Convolution", "Deconvolution", "InnerProduct",
                              "ConvolutionDepthwise", "DepthwiseConvolution"):
            continue
        weights = net.params[layer.name][0].data
        # Weights are (outputs, inputs per output, kernel...); a
        # deconvolution's are (inputs, outputs per input, kernel...), so
        # there it is each input value that costs one row of them.
        per_value = weights.size // weights.shape[0]
        blob = layer.bottom[0] if layer.type == "Deconvolution" else layer.top[0]
        forward += 2 * net.blobs[blob].data.size * per_value
    print("forward %.2f step %.2f" % (forward / 1e9, 3 * forward / 1e9))


if __name__ == "__main__":
    main()
