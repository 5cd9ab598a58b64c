// How fast oneDNN alone runs MobileNet v1's forward pass on this machine
// when nothing around it costs anything: every activation stays in
// 16-channel blocks (nChw16c) on an AVX-512 CPU, where oneDNN's direct
// kernels on them beat the channels-last ones it picks by itself, and in
// the layout it picks elsewhere; the weights are packed once before the
// timing, BatchNorm, Scale and ReLU are folded into the convolutions (ReLU
// as a post-op), and the last pooling and InnerProduct are left out. No
// framework can run the net faster on oneDNN's kernels; dnn_vs_opencv.sh
// sets it beside Crema, OpenCV and ONNX Runtime.
//
//   mobilenet_onednn_bound BATCH ITERATIONS
// prints "median MS fastest MS" over ITERATIONS timed passes (after five
// untimed ones). Threads: OMP_NUM_THREADS; OMP_WAIT_POLICY decides whether
// the threads spin between primitives (active) or sleep (passive).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>
#include <unordered_map>
#include <vector>

namespace {

using Tag = dnnl::memory::format_tag;
using Type = dnnl::memory::data_type;

struct Conv {
  int in, out, kernel, stride, groups;
};

// MobileNet v1, width 1.0 (models/mobilenet_v1/make_mobilenet_v1.py): a 3x3
// convolution, then 13 pairs of a depthwise 3x3 and a pointwise 1x1.
std::vector<Conv> MobileNetV1() {
  std::vector<Conv> convs{{3, 32, 3, 2, 1}};
  const int pairs[][3] = {{32, 64, 1},    {64, 128, 2},  {128, 128, 1}, {128, 256, 2},
                          {256, 256, 1},  {256, 512, 2}, {512, 512, 1}, {512, 512, 1},
                          {512, 512, 1},  {512, 512, 1}, {512, 512, 1}, {512, 1024, 2},
                          {1024, 1024, 1}};
  for (const auto& p : pairs) {
    convs.push_back({p[0], p[0], 3, p[2], p[0]});
    convs.push_back({p[0], p[1], 1, 1, 1});
  }
  return convs;
}

// Values that keep the activations' magnitude (no denormals, which would
// slow every kernel): about 1 / fan-in, varied.
void FillWeights(dnnl::memory& m, int fan_in) {
  float* p = static_cast<float*>(m.get_data_handle());
  const size_t n = m.get_desc().get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = (1.0f + ((i * 7919) % 13 - 6) / 3.0f) / fan_in;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: mobilenet_onednn_bound BATCH ITERATIONS\n");
    return 2;
  }
  const int batch = std::atoi(argv[1]), iterations = std::atoi(argv[2]);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const bool blocks = (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) &
                       static_cast<unsigned>(dnnl::cpu_isa::avx512_core)) ==
                      static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  int size = 224;
  dnnl::memory current({{batch, 3, size, size}, Type::f32, Tag::nchw}, engine);
  std::fill_n(static_cast<float*>(current.get_data_handle()), batch * 3 * size * size, 1.0f);
  std::vector<dnnl::primitive> steps;
  std::vector<std::unordered_map<int, dnnl::memory>> arguments;
  for (const Conv& c : MobileNetV1()) {
    const int pad = c.kernel / 2, out_size = (size + 2 * pad - c.kernel) / c.stride + 1;
    const dnnl::memory::dims weight_dims =
        c.groups > 1 ? dnnl::memory::dims{c.groups, 1, 1, c.kernel, c.kernel}
                     : dnnl::memory::dims{c.out, c.in, c.kernel, c.kernel};
    const auto any = [](const dnnl::memory::dims& dims) {
      return dnnl::memory::desc(dims, Type::f32, Tag::any);
    };
    const auto activation = [&](const dnnl::memory::dims& dims) {
      return dnnl::memory::desc(dims, Type::f32, blocks ? Tag::nChw16c : Tag::any);
    };
    dnnl::post_ops relu;
    relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attributes;
    attributes.set_post_ops(relu);
    const dnnl::memory::desc bias({c.out}, Type::f32, Tag::x);
    dnnl::convolution_forward::primitive_desc conv(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
            c.in < 16 ? current.get_desc() : activation({batch, c.in, size, size}),
            any(weight_dims), bias, activation({batch, c.out, out_size, out_size}),
            {c.stride, c.stride}, {pad, pad}, {pad, pad}),
        attributes, engine);
    dnnl::memory source = current;
    if (conv.src_desc() != current.get_desc()) {  // only the input image
      source = dnnl::memory(conv.src_desc(), engine);
      steps.push_back(dnnl::reorder(current, source));
      arguments.push_back({{DNNL_ARG_FROM, current}, {DNNL_ARG_TO, source}});
    }
    dnnl::memory plain_weights({weight_dims, Type::f32, c.groups > 1 ? Tag::goihw : Tag::oihw},
                               engine);
    FillWeights(plain_weights, c.kernel * c.kernel * c.in / c.groups);
    dnnl::memory weights(conv.weights_desc(), engine), biases(bias, engine);
    dnnl::reorder(plain_weights, weights).execute(stream, plain_weights, weights);
    std::fill_n(static_cast<float*>(biases.get_data_handle()), c.out, 0.01f);
    dnnl::memory destination(conv.dst_desc(), engine);
    steps.push_back(dnnl::convolution_forward(conv));
    arguments.push_back({{DNNL_ARG_SRC, source},
                         {DNNL_ARG_WEIGHTS, weights},
                         {DNNL_ARG_BIAS, biases},
                         {DNNL_ARG_DST, destination}});
    current = destination;
    size = out_size;
  }
  std::vector<double> times;
  for (int pass = 0; pass < iterations + 5; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < steps.size(); ++i) steps[i].execute(stream, arguments[i]);
    stream.wait();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (pass >= 5) times.push_back(took.count());
  }
  std::sort(times.begin(), times.end());
  std::printf("median %.3f fastest %.3f\n", times[times.size() / 2], times[0]);
  return 0;
}
