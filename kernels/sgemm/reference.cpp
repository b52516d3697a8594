// Reference sgemm for the correctness checks: C = A·B, row-major, A m×k,
// B k×n, C m×n, products and sums in fp64 (docs/harness.md, kind "gemm").

#include <cstdint>

extern "C" void eat_gemm_reference(
  const float* a, const float* b, double* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<double>(a[i * k + p])
               * static_cast<double>(b[p * n + j]);
      c[i * n + j] = sum;
    }
  }
}
