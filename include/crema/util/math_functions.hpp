// The numeric kernels every layer and solver builds on, with a CPU body
// (CBLAS, loops) and a GPU body (cuBLAS, cuRAND, CUDA kernels) of each.
// Matrices are row-major. Counts are int, as in BLAS.
#ifndef CREMA_UTIL_MATH_FUNCTIONS_HPP_
#define CREMA_UTIL_MATH_FUNCTIONS_HPP_

extern "C" {
#include <cblas.h>
}

#include <cmath>
#include <cstdint>
#include <vector>

#include "crema/common.hpp"

namespace crema {

// ---- CPU -----------------------------------------------------------------------

// C = alpha * op(A) * op(B) + beta * C, with op(A) M x K, op(B) K x N.
template <typename Dtype>
void cpu_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K, Dtype alpha,
              const Dtype* A, const Dtype* B, Dtype beta, Dtype* C);

// y = alpha * op(A) * x + beta * y, with A M x N.
template <typename Dtype>
void cpu_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, Dtype alpha, const Dtype* A, const Dtype* x,
              Dtype beta, Dtype* y);

// Y = alpha * X + Y
template <typename Dtype>
void cpu_axpy(int N, Dtype alpha, const Dtype* X, Dtype* Y);

// Y = alpha * X + beta * Y
template <typename Dtype>
void cpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y);

// Y = X (any element type; a no-op when X == Y).
template <typename Dtype>
void cpu_copy(int N, const Dtype* X, Dtype* Y);

// Y[i] = alpha (any element type).
template <typename Dtype>
void cpu_set(int N, Dtype alpha, Dtype* Y);

// Y[i] += alpha
template <typename Dtype>
void cpu_add_scalar(int N, Dtype alpha, Dtype* Y);

// X = alpha * X
template <typename Dtype>
void cpu_scal(int N, Dtype alpha, Dtype* X);

// y = alpha * x
template <typename Dtype>
void cpu_scale(int N, Dtype alpha, const Dtype* x, Dtype* y);

// y = the sum over k of coeffs[k] * x[k] (two or more inputs) in one pass
// over memory, block by block (a block of each array is used while it is in
// the core's cache), split over the pool: fewer passes over memory than a
// set and one axpy per input (bench_math_functions). y may be x[0] or x[1]
// (in place).
template <typename Dtype>
void cpu_weighted_sum(int N, const std::vector<const Dtype*>& x, const std::vector<Dtype>& coeffs,
                      Dtype* y);

// Element-wise y[i] = a[i] op b[i].
template <typename Dtype>
void cpu_add(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void cpu_sub(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void cpu_mul(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void cpu_div(int N, const Dtype* a, const Dtype* b, Dtype* y);

// Element-wise y[i] = f(a[i]).
template <typename Dtype>
void cpu_sqr(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void cpu_sqrt(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void cpu_powx(int N, const Dtype* a, Dtype b, Dtype* y);

// y[i] = a[i]^b over n values on the calling thread, as cpu_powx computes
// it: b = -0.75 (LRN's default exponent) as 1 / sqrt(a * sqrt(a)), a fraction
// of a pow's cost and within a few units in the last place of it. The test of
// b stays outside the loops, so that the compiler vectorises the square roots.
// a and y may be the same array.
template <typename Dtype>
inline void plane_powx(int n, const Dtype* a, Dtype b, Dtype* y) {
  if (b == Dtype(-0.75)) {
    for (int i = 0; i < n; ++i) y[i] = Dtype(1) / std::sqrt(a[i] * std::sqrt(a[i]));
    return;
  }
  for (int i = 0; i < n; ++i) y[i] = std::pow(a[i], b);
}
template <typename Dtype>
void cpu_exp(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void cpu_log(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void cpu_abs(int N, const Dtype* a, Dtype* y);
// y[i] = -1, 0 or 1 by the sign of x[i].
template <typename Dtype>
void cpu_sign(int N, const Dtype* x, Dtype* y);
// y[i] = 1 where the sign bit of x[i] is set (so -0 counts), else 0.
template <typename Dtype>
void cpu_sgnbit(int N, const Dtype* x, Dtype* y);

template <typename Dtype>
Dtype cpu_dot(int N, const Dtype* x, const Dtype* y);

// Sums over one plane of n values on the calling thread, for kernels that
// already split their planes over the pool: the sum of a, and the sums of a
// and of a * b. Eight interleaved partial sums let the compiler vectorise
// (a single running sum is a chain of dependent additions).
template <typename Dtype>
inline Dtype plane_sum(int n, const Dtype* a) {
  Dtype lanes[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) lanes[k] += a[i + k];
  }
  Dtype sum = 0;
  for (; i < n; ++i) sum += a[i];
  for (int k = 0; k < 8; ++k) sum += lanes[k];
  return sum;
}
// The dot product is of a and b - b_offset (a batch normalisation's centred
// input, without a rounding of its own).
template <typename Dtype>
inline void plane_sum_and_dot(int n, const Dtype* a, const Dtype* b, Dtype* sum, Dtype* dot,
                              Dtype b_offset = Dtype(0)) {
  Dtype sum_lanes[8] = {}, dot_lanes[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) {
      sum_lanes[k] += a[i + k];
      dot_lanes[k] += a[i + k] * (b[i + k] - b_offset);
    }
  }
  Dtype s = 0, d = 0;
  for (; i < n; ++i) {
    s += a[i];
    d += a[i] * (b[i] - b_offset);
  }
  for (int k = 0; k < 8; ++k) {
    s += sum_lanes[k];
    d += dot_lanes[k];
  }
  *sum = s;
  *dot = d;
}
template <typename Dtype>
Dtype cpu_strided_dot(int N, const Dtype* x, int incx, const Dtype* y, int incy);
// Sum of absolute values.
template <typename Dtype>
Dtype cpu_asum(int N, const Dtype* x);

// Random numbers from the calling thread's generator (Context::rng()).
// A uniformly random 32-bit integer.
uint32_t rng_rand();
// r[i] uniform in [a, b).
template <typename Dtype>
void rng_uniform(int N, Dtype a, Dtype b, Dtype* r);
// r[i] normal with mean mu and standard deviation sigma.
template <typename Dtype>
void rng_gaussian(int N, Dtype mu, Dtype sigma, Dtype* r);
// r[i] = 1 with probability p, else 0.
template <typename Dtype>
void rng_bernoulli(int N, Dtype p, int* r);
template <typename Dtype>
void rng_bernoulli(int N, Dtype p, unsigned int* r);

// ---- GPU (CUDA builds; cuBLAS on the calling thread's handle) --------------------
#ifdef CREMA_CUDA

template <typename Dtype>
void gpu_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K, Dtype alpha,
              const Dtype* A, const Dtype* B, Dtype beta, Dtype* C);
template <typename Dtype>
void gpu_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, Dtype alpha, const Dtype* A, const Dtype* x,
              Dtype beta, Dtype* y);
template <typename Dtype>
void gpu_axpy(int N, Dtype alpha, const Dtype* X, Dtype* Y);
template <typename Dtype>
void gpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y);
// Device-to-device (or any direction: cudaMemcpyDefault) copy of N bytes.
void gpu_memcpy(size_t N, const void* X, void* Y);
template <typename Dtype>
void gpu_set(int N, Dtype alpha, Dtype* Y);
inline void gpu_memset(size_t N, int alpha, void* X) { CUDA_CHECK(cudaMemset(X, alpha, N)); }
template <typename Dtype>
void gpu_add_scalar(int N, Dtype alpha, Dtype* Y);
template <typename Dtype>
void gpu_scal(int N, Dtype alpha, Dtype* X);
template <typename Dtype>
void gpu_scale(int N, Dtype alpha, const Dtype* x, Dtype* y);
template <typename Dtype>
void gpu_add(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void gpu_sub(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void gpu_mul(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void gpu_div(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void gpu_sqr(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void gpu_sqrt(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void gpu_powx(int N, const Dtype* a, Dtype b, Dtype* y);
template <typename Dtype>
void gpu_exp(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void gpu_log(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void gpu_abs(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void gpu_sign(int N, const Dtype* x, Dtype* y);
template <typename Dtype>
void gpu_sgnbit(int N, const Dtype* x, Dtype* y);
// Sets the device int *flag to 1 where any of the N values is NaN or
// infinite, and leaves it alone otherwise; asynchronous (no copy back).
template <typename Dtype>
void gpu_flag_nonfinite(int N, const Dtype* x, int* flag);
// Results land in host memory (*out).
template <typename Dtype>
void gpu_dot(int N, const Dtype* x, const Dtype* y, Dtype* out);
template <typename Dtype>
void gpu_asum(int N, const Dtype* x, Dtype* y);
// From the calling thread's cuRAND generator.
void gpu_rng_uniform(int N, unsigned int* r);
template <typename Dtype>
void gpu_rng_uniform(int N, Dtype a, Dtype b, Dtype* r);
template <typename Dtype>
void gpu_rng_gaussian(int N, Dtype mu, Dtype sigma, Dtype* r);

#endif  // CREMA_CUDA

}  // namespace crema

#endif  // CREMA_UTIL_MATH_FUNCTIONS_HPP_
