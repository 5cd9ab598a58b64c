// Throughput of the CPU kernels that dominate training: sgemm (the machine's
// peak for the convolution and inner-product layers), axpy (the update) and
// im2col/col2im (the convolutions of small images).
#include <benchmark/benchmark.h>

#include <vector>

#include "crema/util/im2col.hpp"
#include "crema/util/math_functions.hpp"

namespace {

void BM_cpu_gemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<float> a(n * n), b(n * n), c(n * n);
  crema::rng_uniform<float>(n * n, -1.f, 1.f, a.data());
  crema::rng_uniform<float>(n * n, -1.f, 1.f, b.data());
  for (auto _ : state) {
    crema::cpu_gemm<float>(CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), b.data(), 0.f,
                           c.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_cpu_gemm)->Arg(64)->Arg(256)->Arg(1024);

void BM_cpu_axpy(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<float> x(n, 1.f), y(n, 2.f);
  for (auto _ : state) {
    crema::cpu_axpy<float>(n, 0.5f, x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * 3 * n * sizeof(float));
}
BENCHMARK(BM_cpu_axpy)->Arg(1 << 16)->Arg(1 << 22);

// Eltwise SUM forward over ResNet-50's largest residual blob (8x256x56x56):
// the one-pass weighted sum against the set-then-axpy-per-bottom passes it
// replaced. Bytes: two inputs read, one output written.
constexpr int kResidual = 8 * 256 * 56 * 56;

void BM_weighted_sum(benchmark::State& state) {
  std::vector<float> a(kResidual, 1.f), b(kResidual, 2.f), y(kResidual);
  for (auto _ : state) {
    crema::cpu_weighted_sum<float>(kResidual, {a.data(), b.data()}, {1.f, 1.f}, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * 3 * int64_t{kResidual} * sizeof(float));
}
BENCHMARK(BM_weighted_sum);

void BM_set_and_axpys(benchmark::State& state) {
  std::vector<float> a(kResidual, 1.f), b(kResidual, 2.f), y(kResidual);
  for (auto _ : state) {
    crema::cpu_set<float>(kResidual, 0.f, y.data());
    crema::cpu_axpy<float>(kResidual, 1.f, a.data(), y.data());
    crema::cpu_axpy<float>(kResidual, 1.f, b.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * 3 * int64_t{kResidual} * sizeof(float));
}
BENCHMARK(BM_set_and_axpys);

// im2col and col2im of one image for LeNet's conv2 (20x12x12, 5x5 kernel:
// rows of 8 values) and AlexNet's conv2 (one group: 48x27x27, 5x5 kernel,
// pad 2). Bytes: the columns written (im2col) or read (col2im).
struct ImageGeometry {
  int channels, size, kernel, pad;
  int output() const { return size + 2 * pad - kernel + 1; }
  int columns() const { return channels * kernel * kernel * output() * output(); }
};
const ImageGeometry kImageGeometries[] = {{20, 12, 5, 0}, {48, 27, 5, 2}};

void BM_im2col(benchmark::State& state) {
  const ImageGeometry g = kImageGeometries[state.range(0)];
  std::vector<float> image(g.channels * g.size * g.size, 1.f), columns(g.columns());
  for (auto _ : state) {
    crema::im2col_cpu(image.data(), g.channels, g.size, g.size, g.kernel, g.kernel, g.pad, g.pad, 1,
                      1, 1, 1, columns.data());
    benchmark::DoNotOptimize(columns.data());
  }
  state.SetBytesProcessed(state.iterations() * int64_t{g.columns()} * sizeof(float));
}
BENCHMARK(BM_im2col)->Arg(0)->Arg(1);

void BM_col2im(benchmark::State& state) {
  const ImageGeometry g = kImageGeometries[state.range(0)];
  std::vector<float> image(g.channels * g.size * g.size), columns(g.columns(), 1.f);
  for (auto _ : state) {
    crema::col2im_cpu(columns.data(), g.channels, g.size, g.size, g.kernel, g.kernel, g.pad, g.pad,
                      1, 1, 1, 1, image.data());
    benchmark::DoNotOptimize(image.data());
  }
  state.SetBytesProcessed(state.iterations() * int64_t{g.columns()} * sizeof(float));
}
BENCHMARK(BM_col2im)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
