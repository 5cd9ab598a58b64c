/* Peak single-precision GEMM throughput on this machine, with 1 and with 2
 * threads, of OpenBLAS and of oneDNN's GEMM (dnnl_sgemm): the ceiling that a
 * GEMM-bound trainer (Crema's convolutions and inner products are im2col +
 * sgemm, on oneDNN's GEMM in builds with oneDNN) can hope to reach. The two
 * libraries differ where OPENBLAS_CORETYPE holds OpenBLAS to narrower vector
 * kernels than the CPU has (AVX2 on an AVX-512 machine).
 * Built and run by scripts/bench/lenet_vs_pytorch.sh:
 *   cc -O2 -fopenmp -o sgemm_peak scripts/bench/sgemm_peak.c -lopenblas -ldnnl && ./sgemm_peak
 * Prints: sgemm GFLOP/s: 1 thread <x>, 2 threads <y>; oneDNN 1 thread <z>, 2 threads <w>
 */
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kSize = 1024, kRepetitions = 5 };

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void openblas_product(const float* a, const float* b, float* c) {
  const int n = kSize;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

static void onednn_product(const float* a, const float* b, float* c) {
  const int n = kSize;
  if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n) != dnnl_success) {
    fprintf(stderr, "sgemm_peak: dnnl_sgemm failed\n");
    exit(1);
  }
}

/* Best (least disturbed) GFLOP/s of kRepetitions C = A * B calls, after one
 * untimed call that lets the library start its threads and warm the caches. */
static double best_gflops(void (*product)(const float*, const float*, float*), int threads,
                          const float* a, const float* b, float* c) {
  const double n = kSize;
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
  product(a, b, c);
  double best = 0;
  for (int r = 0; r < kRepetitions; ++r) {
    const double start = now_seconds();
    product(a, b, c);
    const double seconds = now_seconds() - start;
    const double gflops = 2.0 * n * n * n / seconds * 1e-9; /* one multiply + one add */
    if (gflops > best) best = gflops;
  }
  return best;
}

int main(void) {
  const size_t count = (size_t)kSize * kSize;
  float* a = malloc(count * sizeof(float));
  float* b = malloc(count * sizeof(float));
  float* c = malloc(count * sizeof(float));
  if (!a || !b || !c) {
    fprintf(stderr, "sgemm_peak: out of memory\n");
    return 1;
  }
  /* Ordinary finite values: denormals or NaNs could slow some kernels. */
  for (size_t i = 0; i < count; ++i) {
    a[i] = (float)(i % 17) * 0.01f - 0.08f;
    b[i] = (float)(i % 13) * 0.02f - 0.12f;
  }
  const double one = best_gflops(openblas_product, 1, a, b, c);
  const double two = best_gflops(openblas_product, 2, a, b, c);
  const double dnnl_one = best_gflops(onednn_product, 1, a, b, c);
  const double dnnl_two = best_gflops(onednn_product, 2, a, b, c);
  printf("sgemm GFLOP/s: 1 thread %.1f, 2 threads %.1f; oneDNN 1 thread %.1f, 2 threads %.1f\n",
         one, two, dnnl_one, dnnl_two);
  free(a);
  free(b);
  free(c);
  return 0;
}
