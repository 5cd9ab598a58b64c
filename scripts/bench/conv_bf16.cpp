// oneDNN's convolution primitives in f32 and in bf16 (source, weights and
// output gradient in bf16; output, input gradient and weight gradient in
// f32, as a mixed-precision training step would keep them), forward
// (training), backward data and backward weights, on AlexNet and ResNet-50
// shapes, layouts chosen by oneDNN (no reorders timed): what bf16 could gain
// on this CPU before Crema uses it. Median of 10 runs after 2 warm-ups.
// Built and run by scripts/bench/conv_bf16.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace {

using dnnl::memory;
using Type = memory::data_type;

struct Shape {
  const char* name;
  int batch, in_channels, size, out_channels, kernel, pad;  // square, stride 1
};

double MedianMs(const std::function<void()>& run) {
  run();
  run();
  std::vector<double> ms;
  for (int i = 0; i < 10; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void TimeShape(const Shape& shape, Type low, const dnnl::engine& engine, dnnl::stream& stream) {
  const int out = shape.size + 2 * shape.pad - shape.kernel + 1;
  const memory::dims src{shape.batch, shape.in_channels, shape.size, shape.size},
      weights{shape.out_channels, shape.in_channels, shape.kernel, shape.kernel},
      dst{shape.batch, shape.out_channels, out, out}, strides{1, 1}, pad{shape.pad, shape.pad};
  const auto any = memory::format_tag::any;
  const memory::desc src_low(src, low, any), weights_low(weights, low, any),
      dst_f32(dst, Type::f32, any), dst_low(dst, low, any), src_f32(src, Type::f32, any),
      weights_f32(weights, Type::f32, any);
  const auto direct = dnnl::algorithm::convolution_direct;
  const dnnl::convolution_forward::primitive_desc forward_pd(
      {dnnl::prop_kind::forward_training, direct, src_low, weights_low, dst_f32, strides, pad, pad},
      engine);
  const dnnl::convolution_backward_data::primitive_desc data_pd(
      {direct, src_f32, weights_low, dst_low, strides, pad, pad}, engine, forward_pd);
  const dnnl::convolution_backward_weights::primitive_desc weights_pd(
      {direct, src_low, weights_f32, dst_low, strides, pad, pad}, engine, forward_pd);
  memory x(forward_pd.src_desc(), engine), w(forward_pd.weights_desc(), engine),
      y(forward_pd.dst_desc(), engine), dy(data_pd.diff_dst_desc(), engine),
      dx(data_pd.diff_src_desc(), engine), dw(weights_pd.diff_weights_desc(), engine);
  dnnl::convolution_forward forward(forward_pd);
  dnnl::convolution_backward_data backward_data(data_pd);
  dnnl::convolution_backward_weights backward_weights(weights_pd);
  const double forward_ms = MedianMs([&] {
    forward.execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}});
    stream.wait();
  });
  const double data_ms = MedianMs([&] {
    backward_data.execute(
        stream, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, dx}});
    stream.wait();
  });
  const double weights_ms = MedianMs([&] {
    backward_weights.execute(
        stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, dw}});
    stream.wait();
  });
  const double gflop = 2e-9 * shape.batch * shape.out_channels * out * out * shape.in_channels *
                       shape.kernel * shape.kernel;
  std::printf(
      "%-18s %-4s forward %6.2f ms (%4.0f GFLOP/s)  backward data %6.2f  weights %6.2f  %s\n",
      shape.name, low == Type::f32 ? "f32" : "bf16", forward_ms, gflop / forward_ms * 1e3, data_ms,
      weights_ms, forward_pd.impl_info_str());
}

}  // namespace

int main() {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const Shape shapes[] = {{"alexnet conv2/2", 10, 48, 27, 128, 5, 2},
                          {"alexnet conv3", 10, 256, 13, 384, 3, 1},
                          {"resnet50 res3 3x3", 8, 128, 28, 128, 3, 1},
                          {"resnet50 res4 1x1", 8, 1024, 14, 256, 1, 0}};
  for (const Shape& shape : shapes) {
    for (const Type type : {Type::f32, Type::bf16}) {
      try {
        TimeShape(shape, type, engine, stream);
      } catch (const dnnl::error& e) {
        std::printf("%-18s %-4s not available on this CPU (%s)\n", shape.name,
                    type == Type::f32 ? "f32" : "bf16", e.what());
      }
    }
  }
}
