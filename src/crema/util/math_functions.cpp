#include "crema/util/math_functions.hpp"

#include <algorithm>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cstring>
#include <vector>

#include "crema/util/thread_pool.hpp"

// oneDNN's GEMM serves float products in builds with it (src/crema/dnnl/).
#ifdef CREMA_DNNL
#include "crema/dnnl/dnnl.hpp"
#endif

namespace crema {

namespace {

// Below this many multiply-adds a GEMM runs on the calling thread: waking the
// pool would cost more than it saves.
constexpr int64_t kMinParallelGemmWork = int64_t(1) << 23;
// Parallel GEMMs split C into blocks of this many rows or columns (a multiple
// of the kernels' vector width).
constexpr int kGemmBlock = 16;

// Element-wise functions split n values into blocks over the pool from this
// many values on (fewer cost less than waking a thread)...
constexpr int kMinParallelElements = 1 << 16;
// ... or from this many when each value costs a transcendental function.
constexpr int kMinParallelTranscendentals = 1 << 11;

// Calls fn(begin, end) over [0, n) in blocks of at least min_block values,
// in parallel when there are at least two. Every value is computed alone, so
// the split never changes a result.
template <typename Fn>
void ForBlocks(int n, int min_block, const Fn& fn) {
  if (n <= 0) return;
  if (n < 2 * min_block) {
    fn(0, n);
    return;
  }
  ThreadPool::Global().ParallelFor(n, min_block, [&](int64_t begin, int64_t end) {
    fn(static_cast<int>(begin), static_cast<int>(end));
  });
}

// Overloads that pick the single- or double-precision CBLAS routine, so each
// math function below is written once as a template.
// Single precision goes to oneDNN's GEMM where it is built: faster than
// OpenBLAS's on the shapes of convolution and inner-product layers
// (scripts/bench/gemm_engines.sh; figures in docs/bench-report.md).
// A product over K = 0 (a layer over 0 channels or items) is the empty sum:
// C = beta * C. BLAS refuses the leading dimension 0 such shapes carry, and
// an empty C needs nothing. True when the product was of that kind.
template <typename Dtype>
bool EmptyGemm(int M, int N, int K, Dtype beta, Dtype* C, int ldc) {
  if (M > 0 && N > 0 && K > 0) return false;
  if (K > 0) return true;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      Dtype& c = C[static_cast<size_t>(i) * ldc + j];
      c = beta == 0 ? Dtype(0) : beta * c;
    }
  }
  return true;
}

inline void blas_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                      float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                      float* C, int ldc) {
  if (EmptyGemm(M, N, K, beta, C, ldc)) return;
#ifdef CREMA_DNNL
  DnnlGemmOnThisThread(trans_a == CblasTrans, trans_b == CblasTrans, M, N, K, alpha, A, lda, B, ldb,
                       beta, C, ldc);
#else
  cblas_sgemm(CblasRowMajor, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}
inline void blas_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                      double alpha, const double* A, int lda, const double* B, int ldb, double beta,
                      double* C, int ldc) {
  if (EmptyGemm(M, N, K, beta, C, ldc)) return;
  cblas_dgemm(CblasRowMajor, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

inline void blas_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, float alpha, const float* A,
                      const float* x, float beta, float* y) {
  cblas_sgemv(CblasRowMajor, trans_a, M, N, alpha, A, N, x, 1, beta, y, 1);
}
inline void blas_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, double alpha, const double* A,
                      const double* x, double beta, double* y) {
  cblas_dgemv(CblasRowMajor, trans_a, M, N, alpha, A, N, x, 1, beta, y, 1);
}

inline void blas_axpy(int N, float alpha, const float* X, float* Y) {
  cblas_saxpy(N, alpha, X, 1, Y, 1);
}
inline void blas_axpy(int N, double alpha, const double* X, double* Y) {
  cblas_daxpy(N, alpha, X, 1, Y, 1);
}

inline void blas_scal(int N, float alpha, float* X) { cblas_sscal(N, alpha, X, 1); }
inline void blas_scal(int N, double alpha, double* X) { cblas_dscal(N, alpha, X, 1); }

inline float blas_dot(int N, const float* x, int incx, const float* y, int incy) {
  return cblas_sdot(N, x, incx, y, incy);
}
inline double blas_dot(int N, const double* x, int incx, const double* y, int incy) {
  return cblas_ddot(N, x, incx, y, incy);
}

inline float blas_asum(int N, const float* x) { return cblas_sasum(N, x, 1); }
inline double blas_asum(int N, const double* x) { return cblas_dasum(N, x, 1); }

}  // namespace

// C = alpha * A * B^T + beta * C for a few rows of A against a B too big for
// the caches (an inner product's forward pass over a small batch: A the batch,
// B the weights): computed as C^T = B * A^T, B's rows split over the pool, then
// transposed into C. The GEMM kernels stream a big B as the left operand
// without the packing they give a right operand, which pays where B is read
// once per call (scripts/bench/big_nets_vs_pytorch.sh, AlexNet's fc6).
// Each entry of C is still one dot product; only its place in memory moves.
template <typename Dtype>
void GemmFewRowsByStreamedB(int M, int N, int K, Dtype alpha, const Dtype* A, const Dtype* B,
                            Dtype beta, Dtype* C) {
  thread_local std::vector<Dtype> transposed;  // C^T, N x M
  transposed.resize(static_cast<size_t>(M) * N);
  Dtype* C_t = transposed.data();
  const int64_t blocks = (N + kGemmBlock - 1) / kGemmBlock;
  ThreadPool::Global().ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    const int first = static_cast<int>(begin * kGemmBlock);
    const int size = std::min(static_cast<int>(end * kGemmBlock), N) - first;
    blas_gemm(CblasNoTrans, CblasTrans, size, M, K, alpha, B + static_cast<size_t>(first) * K, K, A,
              K, Dtype(0), C_t + static_cast<size_t>(first) * M, M);
  });
  for (int i = 0; i < M; ++i) {
    Dtype* row = C + static_cast<size_t>(i) * N;
    for (int j = 0; j < N; ++j) {
      const Dtype product = C_t[static_cast<size_t>(j) * M + i];
      row[j] = beta == Dtype(0) ? product : product + beta * row[j];
    }
  }
}

// A GEMM takes the streamed-B path when A has at most this many rows and B
// at least this many rows and columns (a matrix of 4 MiB of floats or more:
// beyond a core's L2 cache), as an inner product's weights are.
constexpr int kStreamedBMaxRows = 16;
constexpr int kStreamedBMinSide = 1024;

template <typename Dtype>
void cpu_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K, Dtype alpha,
              const Dtype* A, const Dtype* B, Dtype beta, Dtype* C) {
  // Row-major: the leading dimension is the stored row length.
  const int lda = (trans_a == CblasNoTrans) ? K : M;
  const int ldb = (trans_b == CblasNoTrans) ? N : K;
  if (trans_a == CblasNoTrans && trans_b == CblasTrans && M > 0 && M <= kStreamedBMaxRows &&
      N >= kStreamedBMinSide && K >= kStreamedBMinSide) {
    GemmFewRowsByStreamedB(M, N, K, alpha, A, B, beta, C);
    return;
  }
  // OpenBLAS runs on one thread (thread_pool.hpp); a product worth it is cut
  // into blocks of C's rows or columns, whichever are more, one per pool
  // thread. Each entry of C is still one thread's whole dot product.
  const int64_t work = static_cast<int64_t>(M) * N * K;
  const int split_dim = std::max(M, N);
  if (work < kMinParallelGemmWork || split_dim < 2 * kGemmBlock) {
    blas_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, N);
    return;
  }
  const bool split_rows = M >= N;
  const int64_t blocks = (split_dim + kGemmBlock - 1) / kGemmBlock;
  ThreadPool::Global().ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    const int first = static_cast<int>(begin * kGemmBlock);
    const int size = std::min(static_cast<int>(end * kGemmBlock), split_dim) - first;
    if (split_rows) {
      const Dtype* A_rows = A + (trans_a == CblasNoTrans ? static_cast<size_t>(first) * K : first);
      blas_gemm(trans_a, trans_b, size, N, K, alpha, A_rows, lda, B, ldb, beta,
                C + static_cast<size_t>(first) * N, N);
    } else {
      const Dtype* B_columns =
          B + (trans_b == CblasNoTrans ? first : static_cast<size_t>(first) * K);
      blas_gemm(trans_a, trans_b, M, size, K, alpha, A, lda, B_columns, ldb, beta, C + first, N);
    }
  });
}

template <typename Dtype>
void cpu_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, Dtype alpha, const Dtype* A, const Dtype* x,
              Dtype beta, Dtype* y) {
  blas_gemv(trans_a, M, N, alpha, A, x, beta, y);
}

template <typename Dtype>
void cpu_axpy(int N, Dtype alpha, const Dtype* X, Dtype* Y) {
  ForBlocks(N, kMinParallelElements,
            [&](int begin, int end) { blas_axpy(end - begin, alpha, X + begin, Y + begin); });
}

template <typename Dtype>
void cpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y) {
  // As in BLAS, beta == 0 means Y is not read: it may hold garbage or NaN.
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    if (beta == Dtype(0)) {
      std::memset(Y + begin, 0, sizeof(Dtype) * (end - begin));
    } else {
      blas_scal(end - begin, beta, Y + begin);
    }
    blas_axpy(end - begin, alpha, X + begin, Y + begin);
  });
}

template <typename Dtype>
void cpu_copy(int N, const Dtype* X, Dtype* Y) {
  if (X == Y || N <= 0) return;
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    std::memcpy(Y + begin, X + begin, sizeof(Dtype) * (end - begin));
  });
}

template <typename Dtype>
void cpu_set(int N, Dtype alpha, Dtype* Y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    if (alpha == Dtype(0)) {
      std::memset(Y + begin, 0, sizeof(Dtype) * (end - begin));
      return;
    }
    for (int i = begin; i < end; ++i) Y[i] = alpha;
  });
}

template <typename Dtype>
void cpu_add_scalar(int N, Dtype alpha, Dtype* Y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) Y[i] += alpha;
  });
}

template <typename Dtype>
void cpu_scal(int N, Dtype alpha, Dtype* X) {
  ForBlocks(N, kMinParallelElements,
            [&](int begin, int end) { blas_scal(end - begin, alpha, X + begin); });
}

template <typename Dtype>
void cpu_scale(int N, Dtype alpha, const Dtype* x, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = alpha * x[i];
  });
}

// The blocks of cpu_weighted_sum: 16K values (64 KB of floats) of each
// array fit a core's L2 cache together.
constexpr int kCacheBlock = 16 << 10;

template <typename Fn>
void ForCacheBlocks(int n, const Fn& fn) {
  ForBlocks(n, kMinParallelElements, [&](int begin, int end) {
    for (int first = begin; first < end; first += kCacheBlock) {
      fn(first, std::min(end, first + kCacheBlock));
    }
  });
}

template <typename Dtype>
void cpu_weighted_sum(int N, const std::vector<const Dtype*>& x, const std::vector<Dtype>& coeffs,
                      Dtype* y) {
  CHECK_GE(x.size(), 2u);
  CHECK_EQ(x.size(), coeffs.size());
  ForCacheBlocks(N, [&](int begin, int end) {
    const Dtype *a = x[0], *b = x[1];
    const Dtype ca = coeffs[0], cb = coeffs[1];
    if (ca == Dtype(1) && cb == Dtype(1)) {
      for (int i = begin; i < end; ++i) y[i] = a[i] + b[i];
    } else {
      for (int i = begin; i < end; ++i) y[i] = ca * a[i] + cb * b[i];
    }
    for (size_t k = 2; k < x.size(); ++k) {
      const Dtype* c = x[k];
      const Dtype cc = coeffs[k];
      for (int i = begin; i < end; ++i) y[i] += cc * c[i];
    }
  });
}

template <typename Dtype>
void cpu_add(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = a[i] + b[i];
  });
}

template <typename Dtype>
void cpu_sub(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = a[i] - b[i];
  });
}

template <typename Dtype>
void cpu_mul(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = a[i] * b[i];
  });
}

template <typename Dtype>
void cpu_div(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = a[i] / b[i];
  });
}

template <typename Dtype>
void cpu_sqr(int N, const Dtype* a, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = a[i] * a[i];
  });
}

template <typename Dtype>
void cpu_sqrt(int N, const Dtype* a, Dtype* y) {
  ForBlocks(N, kMinParallelTranscendentals, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = std::sqrt(a[i]);
  });
}

template <typename Dtype>
void cpu_powx(int N, const Dtype* a, Dtype b, Dtype* y) {
  ForBlocks(N, kMinParallelTranscendentals,
            [&](int begin, int end) { plane_powx(end - begin, a + begin, b, y + begin); });
}

template <typename Dtype>
void cpu_exp(int N, const Dtype* a, Dtype* y) {
  ForBlocks(N, kMinParallelTranscendentals, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = std::exp(a[i]);
  });
}

template <typename Dtype>
void cpu_log(int N, const Dtype* a, Dtype* y) {
  ForBlocks(N, kMinParallelTranscendentals, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = std::log(a[i]);
  });
}

template <typename Dtype>
void cpu_abs(int N, const Dtype* a, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = std::fabs(a[i]);
  });
}

template <typename Dtype>
void cpu_sign(int N, const Dtype* x, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      y[i] = static_cast<Dtype>((Dtype(0) < x[i]) - (x[i] < Dtype(0)));
    }
  });
}

template <typename Dtype>
void cpu_sgnbit(int N, const Dtype* x, Dtype* y) {
  ForBlocks(N, kMinParallelElements, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) y[i] = std::signbit(x[i]) ? Dtype(1) : Dtype(0);
  });
}

template <typename Dtype>
Dtype cpu_dot(int N, const Dtype* x, const Dtype* y) {
  return blas_dot(N, x, 1, y, 1);
}

template <typename Dtype>
Dtype cpu_strided_dot(int N, const Dtype* x, int incx, const Dtype* y, int incy) {
  return blas_dot(N, x, incx, y, incy);
}

template <typename Dtype>
Dtype cpu_asum(int N, const Dtype* x) {
  return blas_asum(N, x);
}

uint32_t rng_rand() { return Context::rng()(); }

// Invariant (the CHECKs of the three generators): callers validate user
// values first (fillers, dropout_ratio) and pass shaped blobs' memory.
template <typename Dtype>
void rng_uniform(int N, Dtype a, Dtype b, Dtype* r) {
  CHECK_GE(N, 0);
  CHECK(r);
  CHECK_LE(a, b);
  // Boost's distribution rejects draws equal to b, so with a == b it never returns.
  if (a == b) {
    cpu_set(N, a, r);
    return;
  }
  boost::random::uniform_real_distribution<Dtype> distribution(a, b);
  RNG::Generator& generator = Context::rng().generator();
  for (int i = 0; i < N; ++i) r[i] = distribution(generator);
}

template <typename Dtype>
void rng_gaussian(int N, Dtype mu, Dtype sigma, Dtype* r) {
  CHECK_GE(N, 0);
  CHECK(r);
  CHECK_GT(sigma, 0);
  boost::random::normal_distribution<Dtype> distribution(mu, sigma);
  RNG::Generator& generator = Context::rng().generator();
  for (int i = 0; i < N; ++i) r[i] = distribution(generator);
}

namespace {

template <typename Dtype, typename Int>
void FillBernoulli(int N, Dtype p, Int* r) {
  CHECK_GE(N, 0);
  CHECK(r);
  CHECK_GE(p, 0);
  CHECK_LE(p, 1);
  boost::random::bernoulli_distribution<Dtype> distribution(p);
  RNG::Generator& generator = Context::rng().generator();
  for (int i = 0; i < N; ++i) r[i] = distribution(generator) ? 1 : 0;
}

}  // namespace

template <typename Dtype>
void rng_bernoulli(int N, Dtype p, int* r) {
  FillBernoulli(N, p, r);
}

template <typename Dtype>
void rng_bernoulli(int N, Dtype p, unsigned int* r) {
  FillBernoulli(N, p, r);
}

#define INSTANTIATE_CPU_MATH(Dtype)                                                           \
  template void cpu_gemm<Dtype>(CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, Dtype,       \
                                const Dtype*, const Dtype*, Dtype, Dtype*);                   \
  template void cpu_gemv<Dtype>(CBLAS_TRANSPOSE, int, int, Dtype, const Dtype*, const Dtype*, \
                                Dtype, Dtype*);                                               \
  template void cpu_axpy<Dtype>(int, Dtype, const Dtype*, Dtype*);                            \
  template void cpu_axpby<Dtype>(int, Dtype, const Dtype*, Dtype, Dtype*);                    \
  template void cpu_add_scalar<Dtype>(int, Dtype, Dtype*);                                    \
  template void cpu_scal<Dtype>(int, Dtype, Dtype*);                                          \
  template void cpu_scale<Dtype>(int, Dtype, const Dtype*, Dtype*);                           \
  template void cpu_weighted_sum<Dtype>(int, const std::vector<const Dtype*>&,                \
                                        const std::vector<Dtype>&, Dtype*);                   \
  template void cpu_add<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void cpu_sub<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void cpu_mul<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void cpu_div<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void cpu_sqr<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void cpu_sqrt<Dtype>(int, const Dtype*, Dtype*);                                   \
  template void cpu_powx<Dtype>(int, const Dtype*, Dtype, Dtype*);                            \
  template void cpu_exp<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void cpu_log<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void cpu_abs<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void cpu_sign<Dtype>(int, const Dtype*, Dtype*);                                   \
  template void cpu_sgnbit<Dtype>(int, const Dtype*, Dtype*);                                 \
  template Dtype cpu_dot<Dtype>(int, const Dtype*, const Dtype*);                             \
  template Dtype cpu_strided_dot<Dtype>(int, const Dtype*, int, const Dtype*, int);           \
  template Dtype cpu_asum<Dtype>(int, const Dtype*);                                          \
  template void rng_uniform<Dtype>(int, Dtype, Dtype, Dtype*);                                \
  template void rng_gaussian<Dtype>(int, Dtype, Dtype, Dtype*);                               \
  template void rng_bernoulli<Dtype>(int, Dtype, int*);                                       \
  template void rng_bernoulli<Dtype>(int, Dtype, unsigned int*)

INSTANTIATE_CPU_MATH(float);
INSTANTIATE_CPU_MATH(double);

#define INSTANTIATE_CPU_FILL(Dtype)                         \
  template void cpu_copy<Dtype>(int, const Dtype*, Dtype*); \
  template void cpu_set<Dtype>(int, Dtype, Dtype*)

INSTANTIATE_CPU_FILL(float);
INSTANTIATE_CPU_FILL(double);
INSTANTIATE_CPU_FILL(int);
INSTANTIATE_CPU_FILL(unsigned int);

}  // namespace crema
