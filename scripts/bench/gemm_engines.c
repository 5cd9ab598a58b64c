/* OpenBLAS's cblas_sgemm against oneDNN's dnnl_sgemm on one thread, on the
 * GEMM shapes of LeNet's, cifar10_quick's and AlexNet's layers (row-major, as
 * Crema calls them): why Crema's single-precision GEMMs run on oneDNN's in
 * builds with oneDNN. The two are timed in alternation, best of 3 rounds.
 * Built and run by scripts/bench/gemm_engines.sh.
 */
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
  const char* what;
  int m, n, k;
  char trans_a, trans_b;
} Shape;

/* Convolutions per chunk of images as Crema cuts them (columns of half a
 * core's L2 cache), inner products per batch. */
static const Shape kShapes[] = {
    {"LeNet conv1 forward (3 images)", 20, 1728, 25, 'N', 'N'},
    {"LeNet conv1 weight gradient", 20, 25, 1728, 'N', 'T'},
    {"LeNet conv2 forward (3 images)", 50, 192, 500, 'N', 'N'},
    {"LeNet conv2 weight gradient", 50, 500, 192, 'N', 'T'},
    {"LeNet conv2 bottom gradient", 500, 192, 50, 'T', 'N'},
    {"LeNet ip1 forward (batch 64)", 64, 500, 800, 'N', 'T'},
    {"LeNet ip1 weight gradient", 500, 800, 64, 'T', 'N'},
    {"LeNet ip1 bottom gradient", 64, 800, 500, 'N', 'N'},
    {"cifar10_quick conv2 forward (1 image)", 32, 256, 800, 'N', 'N'},
    {"cifar10_quick conv2 weight gradient", 32, 800, 256, 'N', 'T'},
    {"cifar10_quick conv2 bottom gradient", 800, 256, 32, 'T', 'N'},
    {"AlexNet conv2 forward (1 image, 1 group)", 128, 729, 1200, 'N', 'N'},
    {"AlexNet fc6 forward (batch 10)", 10, 4096, 9216, 'N', 'T'},
};

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* GFLOP/s of `reps` products with one library (0: OpenBLAS, 1: oneDNN). */
static double gflops(int library, const Shape* s, int reps, const float* a, const float* b,
                     float* c) {
  const int lda = s->trans_a == 'N' ? s->k : s->m, ldb = s->trans_b == 'N' ? s->n : s->k;
  const double start = now_seconds();
  for (int r = 0; r < reps; ++r) {
    if (library == 0) {
      cblas_sgemm(CblasRowMajor, s->trans_a == 'N' ? CblasNoTrans : CblasTrans,
                  s->trans_b == 'N' ? CblasNoTrans : CblasTrans, s->m, s->n, s->k, 1.0f, a, lda,
                  b, ldb, 0.0f, c, s->n);
    } else if (dnnl_sgemm(s->trans_a, s->trans_b, s->m, s->n, s->k, 1.0f, a, lda, b, ldb, 0.0f, c,
                          s->n) != dnnl_success) {
      fprintf(stderr, "gemm_engines: dnnl_sgemm failed\n");
      exit(1);
    }
  }
  return 2.0 * s->m * s->n * s->k * reps / (now_seconds() - start) * 1e-9;
}

int main(void) {
  openblas_set_num_threads(1);
  omp_set_num_threads(1);
  printf("%-42s %8s %8s %6s\n", "shape (M x N x K, one thread)", "OpenBLAS", "oneDNN", "ratio");
  for (size_t i = 0; i < sizeof kShapes / sizeof kShapes[0]; ++i) {
    const Shape* s = &kShapes[i];
    float* a = malloc(sizeof(float) * s->m * s->k);
    float* b = malloc(sizeof(float) * s->k * s->n);
    float* c = malloc(sizeof(float) * s->m * s->n);
    for (int j = 0; j < s->m * s->k; ++j) a[j] = (float)(j % 17) * 0.01f - 0.08f;
    for (int j = 0; j < s->k * s->n; ++j) b[j] = (float)(j % 13) * 0.02f - 0.12f;
    /* About 20 ms of work per timing at 100 GFLOP/s. */
    const int reps = 1 + (int)(2e9 / (2.0 * s->m * s->n * s->k));
    double best[2] = {0, 0};
    gflops(0, s, 1, a, b, c);
    gflops(1, s, 1, a, b, c);
    for (int round = 0; round < 3; ++round) {
      for (int library = 0; library < 2; ++library) {
        const double g = gflops(library, s, reps, a, b, c);
        if (g > best[library]) best[library] = g;
      }
    }
    printf("%-42s %8.1f %8.1f %6.2f   (%dx%dx%d %c%c)\n", s->what, best[0], best[1],
           best[1] / best[0], s->m, s->n, s->k, s->trans_a, s->trans_b);
    free(a);
    free(b);
    free(c);
  }
  return 0;
}
