// Reference sgemm for the correctness checks of the GPU tasks, run on the
// CPU: C = A·B, row-major, A m×k, B k×n, C m×n, products and sums in fp64
// (docs/harness.md, kind "gemm"). The i-p-j order streams rows of B and C,
// so a 1024^3 problem takes about a second on one core, not ten.

#include <cstdint>

extern "C" void eat_gemm_reference(
  const float* a, const float* b, double* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    double* row = c + i * n;
    for (int64_t j = 0; j < n; ++j)
      row[j] = 0.0;
    for (int64_t p = 0; p < k; ++p) {
      const double av = static_cast<double>(a[i * k + p]);
      const float* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j)
        row[j] += av * static_cast<double>(brow[j]);
    }
  }
}
