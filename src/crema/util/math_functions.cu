#include <cmath>

#include "crema/util/math_functions.hpp"

namespace crema {

namespace {

// cuBLAS is column-major; these convert a row-major transpose flag.
inline cublasOperation_t ToCublas(CBLAS_TRANSPOSE trans) {
  return trans == CblasNoTrans ? CUBLAS_OP_N : CUBLAS_OP_T;
}

// Overloads that pick the single- or double-precision cuBLAS routine, so each
// math function below is written once as a template.
inline void cublas_gemm(cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k,
                        float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                        float* C, int ldc) {
  CUBLAS_CHECK(cublasSgemm(Context::cublas_handle(), op_a, op_b, m, n, k, &alpha, A, lda, B, ldb,
                           &beta, C, ldc));
}
inline void cublas_gemm(cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k,
                        double alpha, const double* A, int lda, const double* B, int ldb,
                        double beta, double* C, int ldc) {
  CUBLAS_CHECK(cublasDgemm(Context::cublas_handle(), op_a, op_b, m, n, k, &alpha, A, lda, B, ldb,
                           &beta, C, ldc));
}

inline void cublas_gemv(cublasOperation_t op, int m, int n, float alpha, const float* A, int lda,
                        const float* x, float beta, float* y) {
  CUBLAS_CHECK(cublasSgemv(Context::cublas_handle(), op, m, n, &alpha, A, lda, x, 1, &beta, y, 1));
}
inline void cublas_gemv(cublasOperation_t op, int m, int n, double alpha, const double* A, int lda,
                        const double* x, double beta, double* y) {
  CUBLAS_CHECK(cublasDgemv(Context::cublas_handle(), op, m, n, &alpha, A, lda, x, 1, &beta, y, 1));
}

inline void cublas_axpy(int N, float alpha, const float* X, float* Y) {
  CUBLAS_CHECK(cublasSaxpy(Context::cublas_handle(), N, &alpha, X, 1, Y, 1));
}
inline void cublas_axpy(int N, double alpha, const double* X, double* Y) {
  CUBLAS_CHECK(cublasDaxpy(Context::cublas_handle(), N, &alpha, X, 1, Y, 1));
}

inline void cublas_scal(int N, float alpha, float* X) {
  CUBLAS_CHECK(cublasSscal(Context::cublas_handle(), N, &alpha, X, 1));
}
inline void cublas_scal(int N, double alpha, double* X) {
  CUBLAS_CHECK(cublasDscal(Context::cublas_handle(), N, &alpha, X, 1));
}

inline void cublas_dot(int N, const float* x, const float* y, float* out) {
  CUBLAS_CHECK(cublasSdot(Context::cublas_handle(), N, x, 1, y, 1, out));
}
inline void cublas_dot(int N, const double* x, const double* y, double* out) {
  CUBLAS_CHECK(cublasDdot(Context::cublas_handle(), N, x, 1, y, 1, out));
}

inline void cublas_asum(int N, const float* x, float* out) {
  CUBLAS_CHECK(cublasSasum(Context::cublas_handle(), N, x, 1, out));
}
inline void cublas_asum(int N, const double* x, double* out) {
  CUBLAS_CHECK(cublasDasum(Context::cublas_handle(), N, x, 1, out));
}

inline void curand_uniform(float* r, int N) {
  CURAND_CHECK(curandGenerateUniform(Context::curand_generator(), r, N));
}
inline void curand_uniform(double* r, int N) {
  CURAND_CHECK(curandGenerateUniformDouble(Context::curand_generator(), r, N));
}

inline void curand_normal(float* r, int N, float mu, float sigma) {
  CURAND_CHECK(curandGenerateNormal(Context::curand_generator(), r, N, mu, sigma));
}
inline void curand_normal(double* r, int N, double mu, double sigma) {
  CURAND_CHECK(curandGenerateNormalDouble(Context::curand_generator(), r, N, mu, sigma));
}

__device__ inline float device_pow(float a, float b) { return powf(a, b); }
__device__ inline double device_pow(double a, double b) { return pow(a, b); }

template <typename Dtype>
__global__ void SetKernel(int64_t n, Dtype alpha, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = alpha; }
}

template <typename Dtype>
__global__ void AddScalarKernel(int64_t n, Dtype alpha, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] += alpha; }
}

template <typename Dtype>
__global__ void ScaleKernel(int64_t n, Dtype alpha, const Dtype* x, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = alpha * x[i]; }
}

template <typename Dtype>
__global__ void AddKernel(int64_t n, const Dtype* a, const Dtype* b, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = a[i] + b[i]; }
}

template <typename Dtype>
__global__ void SubKernel(int64_t n, const Dtype* a, const Dtype* b, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = a[i] - b[i]; }
}

template <typename Dtype>
__global__ void MulKernel(int64_t n, const Dtype* a, const Dtype* b, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = a[i] * b[i]; }
}

template <typename Dtype>
__global__ void DivKernel(int64_t n, const Dtype* a, const Dtype* b, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = a[i] / b[i]; }
}

template <typename Dtype>
__global__ void SqrKernel(int64_t n, const Dtype* a, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = a[i] * a[i]; }
}

template <typename Dtype>
__global__ void SqrtKernel(int64_t n, const Dtype* a, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = sqrt(a[i]); }
}

template <typename Dtype>
__global__ void PowxKernel(int64_t n, const Dtype* a, Dtype b, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = device_pow(a[i], b); }
}

template <typename Dtype>
__global__ void ExpKernel(int64_t n, const Dtype* a, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = exp(a[i]); }
}

template <typename Dtype>
__global__ void LogKernel(int64_t n, const Dtype* a, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = log(a[i]); }
}

template <typename Dtype>
__global__ void AbsKernel(int64_t n, const Dtype* a, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = fabs(a[i]); }
}

template <typename Dtype>
__global__ void SignKernel(int64_t n, const Dtype* x, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = static_cast<Dtype>((Dtype(0) < x[i]) - (x[i] < Dtype(0))); }
}

template <typename Dtype>
__global__ void SgnbitKernel(int64_t n, const Dtype* x, Dtype* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = signbit(x[i]) ? Dtype(1) : Dtype(0); }
}

// Raises *flag (writes 1) where a value is not finite. Every writer writes
// the same value, so the race between them is harmless.
template <typename Dtype>
__global__ void FlagNonFiniteKernel(int64_t n, const Dtype* x, int* flag) {
  CUDA_KERNEL_LOOP(i, n) {
    if (!isfinite(x[i])) *flag = 1;
  }
}

// Maps cuRAND's (0, 1] onto [a, b): u = 1 lands on a, u -> 0 approaches b.
// Rounding can still produce b itself, which is pulled just below it.
template <typename Dtype>
__global__ void UniformToRangeKernel(int64_t n, Dtype a, Dtype b, Dtype* r) {
  CUDA_KERNEL_LOOP(i, n) {
    Dtype value = b - (b - a) * r[i];
    if (value >= b) value = nextafter(b, a);
    if (value < a) value = a;
    r[i] = value;
  }
}

}  // namespace

template <typename Dtype>
void gpu_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K, Dtype alpha,
              const Dtype* A, const Dtype* B, Dtype beta, Dtype* C) {
  // A row-major matrix is its column-major transpose, so compute C^T = op(B)^T op(A)^T:
  // swap the operands and the M/N roles; leading dimensions are the row-major row lengths.
  const int lda = (trans_a == CblasNoTrans) ? K : M;
  const int ldb = (trans_b == CblasNoTrans) ? N : K;
  cublas_gemm(ToCublas(trans_b), ToCublas(trans_a), N, M, K, alpha, B, ldb, A, lda, beta, C, N);
}

template <typename Dtype>
void gpu_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, Dtype alpha, const Dtype* A, const Dtype* x,
              Dtype beta, Dtype* y) {
  // Row-major M x N A is column-major N x M A^T, so the transpose flag flips.
  const cublasOperation_t op = (trans_a == CblasNoTrans) ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublas_gemv(op, N, M, alpha, A, N, x, beta, y);
}

template <typename Dtype>
void gpu_axpy(int N, Dtype alpha, const Dtype* X, Dtype* Y) {
  cublas_axpy(N, alpha, X, Y);
}

template <typename Dtype>
void gpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y) {
  // As in BLAS, beta == 0 means Y is not read: it may hold garbage or NaN.
  if (beta == Dtype(0)) {
    gpu_set(N, Dtype(0), Y);
  } else {
    cublas_scal(N, beta, Y);
  }
  cublas_axpy(N, alpha, X, Y);
}

void gpu_memcpy(size_t N, const void* X, void* Y) {
  if (X == Y || N == 0) return;
  CUDA_CHECK(cudaMemcpy(Y, X, N, cudaMemcpyDefault));
}

template <typename Dtype>
void gpu_set(int N, Dtype alpha, Dtype* Y) {
  if (N <= 0) return;
  if (alpha == Dtype(0)) {
    CUDA_CHECK(cudaMemset(Y, 0, sizeof(Dtype) * N));
    return;
  }
  SetKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, alpha, Y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_add_scalar(int N, Dtype alpha, Dtype* Y) {
  if (N <= 0) return;
  AddScalarKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, alpha, Y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_scal(int N, Dtype alpha, Dtype* X) {
  cublas_scal(N, alpha, X);
}

template <typename Dtype>
void gpu_scale(int N, Dtype alpha, const Dtype* x, Dtype* y) {
  if (N <= 0) return;
  ScaleKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, alpha, x, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_add(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  if (N <= 0) return;
  AddKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, b, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_sub(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  if (N <= 0) return;
  SubKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, b, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_mul(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  if (N <= 0) return;
  MulKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, b, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_div(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  if (N <= 0) return;
  DivKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, b, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_sqr(int N, const Dtype* a, Dtype* y) {
  if (N <= 0) return;
  SqrKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_sqrt(int N, const Dtype* a, Dtype* y) {
  if (N <= 0) return;
  SqrtKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_powx(int N, const Dtype* a, Dtype b, Dtype* y) {
  if (N <= 0) return;
  PowxKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, b, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_exp(int N, const Dtype* a, Dtype* y) {
  if (N <= 0) return;
  ExpKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_log(int N, const Dtype* a, Dtype* y) {
  if (N <= 0) return;
  LogKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_abs(int N, const Dtype* a, Dtype* y) {
  if (N <= 0) return;
  AbsKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_sign(int N, const Dtype* x, Dtype* y) {
  if (N <= 0) return;
  SignKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, x, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_sgnbit(int N, const Dtype* x, Dtype* y) {
  if (N <= 0) return;
  SgnbitKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, x, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_flag_nonfinite(int N, const Dtype* x, int* flag) {
  if (N <= 0) return;
  FlagNonFiniteKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, x, flag);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_dot(int N, const Dtype* x, const Dtype* y, Dtype* out) {
  cublas_dot(N, x, y, out);
}

template <typename Dtype>
void gpu_asum(int N, const Dtype* x, Dtype* y) {
  cublas_asum(N, x, y);
}

void gpu_rng_uniform(int N, unsigned int* r) {
  CHECK_GE(N, 0);
  if (N == 0) return;
  CURAND_CHECK(curandGenerate(Context::curand_generator(), r, N));
}

template <typename Dtype>
void gpu_rng_uniform(int N, Dtype a, Dtype b, Dtype* r) {
  CHECK_GE(N, 0);
  CHECK_LE(a, b);
  if (N == 0) return;
  if (a == b) {
    gpu_set(N, a, r);
    return;
  }
  curand_uniform(r, N);
  UniformToRangeKernel<Dtype><<<CREMA_GET_BLOCKS(N), CREMA_CUDA_NUM_THREADS>>>(N, a, b, r);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void gpu_rng_gaussian(int N, Dtype mu, Dtype sigma, Dtype* r) {
  CHECK_GE(N, 0);
  CHECK_GT(sigma, 0);
  // cuRAND's Box-Muller makes values in pairs and refuses odd counts: the even
  // prefix goes straight into r, the last value comes from a pair drawn aside.
  const int even_count = N - N % 2;
  if (even_count > 0) curand_normal(r, even_count, mu, sigma);
  if (even_count == N) return;
  Dtype* pair = nullptr;
  CUDA_CHECK(cudaMalloc(&pair, 2 * sizeof(Dtype)));
  curand_normal(pair, 2, mu, sigma);
  CUDA_CHECK(cudaMemcpy(r + even_count, pair, sizeof(Dtype), cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaFree(pair));
}

#define INSTANTIATE_GPU_MATH(Dtype)                                                           \
  template void gpu_gemm<Dtype>(CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, Dtype,       \
                                const Dtype*, const Dtype*, Dtype, Dtype*);                   \
  template void gpu_gemv<Dtype>(CBLAS_TRANSPOSE, int, int, Dtype, const Dtype*, const Dtype*, \
                                Dtype, Dtype*);                                               \
  template void gpu_axpy<Dtype>(int, Dtype, const Dtype*, Dtype*);                            \
  template void gpu_axpby<Dtype>(int, Dtype, const Dtype*, Dtype, Dtype*);                    \
  template void gpu_add_scalar<Dtype>(int, Dtype, Dtype*);                                    \
  template void gpu_scal<Dtype>(int, Dtype, Dtype*);                                          \
  template void gpu_scale<Dtype>(int, Dtype, const Dtype*, Dtype*);                           \
  template void gpu_add<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void gpu_sub<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void gpu_mul<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void gpu_div<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void gpu_sqr<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void gpu_sqrt<Dtype>(int, const Dtype*, Dtype*);                                   \
  template void gpu_powx<Dtype>(int, const Dtype*, Dtype, Dtype*);                            \
  template void gpu_exp<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void gpu_log<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void gpu_abs<Dtype>(int, const Dtype*, Dtype*);                                    \
  template void gpu_sign<Dtype>(int, const Dtype*, Dtype*);                                   \
  template void gpu_sgnbit<Dtype>(int, const Dtype*, Dtype*);                                 \
  template void gpu_flag_nonfinite<Dtype>(int, const Dtype*, int*);                           \
  template void gpu_dot<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                      \
  template void gpu_asum<Dtype>(int, const Dtype*, Dtype*);                                   \
  template void gpu_rng_uniform<Dtype>(int, Dtype, Dtype, Dtype*);                            \
  template void gpu_rng_gaussian<Dtype>(int, Dtype, Dtype, Dtype*)

INSTANTIATE_GPU_MATH(float);
INSTANTIATE_GPU_MATH(double);

template void gpu_set<float>(int, float, float*);
template void gpu_set<double>(int, double, double*);
template void gpu_set<int>(int, int, int*);
template void gpu_set<unsigned int>(int, unsigned int, unsigned int*);

}  // namespace crema
