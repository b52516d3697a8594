// Baseline sgemm: what a first-time author writes. C = A·B, row-major,
// A m×k, B k×n, C m×n; the naive i-j-k loop with a float accumulator.
// Speedups are measured against this.

#include <cstdint>

extern "C" void eat_gemm(
  const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  }
}
