/* The comparison behind docs/kernels.md's host-kernel line: Debian 12's OpenBLAS (0.3.21,
 * pthread build) SGEMM alone, no dequantization, at the default problem's shape
 * C[128x7168] = A[128x16384] * B[7168x16384]^T, best of 5 calls.
 *   apt-get install libopenblas-dev
 *   gcc -O2 openblas_sgemm.c -o openblas_sgemm -lopenblas && OPENBLAS_NUM_THREADS=2 ./openblas_sgemm */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  const int m = 128, n = 7168, k = 16384;
  float *a = malloc(4L * m * k), *b = malloc(4L * n * k), *c = malloc(4L * m * n);
  for (long i = 0; i < (long)m * k; i++) a[i] = (i % 7) * 0.5f;
  for (long i = 0; i < (long)n * k; i++) b[i] = (i % 5) * 0.25f;
  double best = 1e9;
  for (int r = 0; r < 5; r++) {
    double t = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a, k, b, k, 0, c, n);
    t = now() - t;
    if (t < best) best = t;
    printf("%.3f s\n", t);
  }
  printf("min %.3f s, %.1f GFLOP/s\n", best, 2.0 * m * n * k / best / 1e9);
  free(a), free(b), free(c);
  return 0;
}
