// Reference rmsnorm for the correctness checks (docs/harness.md, kind
// "rmsnorm"): out[i][j] = x[i][j] * w[j] / sqrt(mean_j(x[i][:]^2) + 1e-5),
// every operation in fp64.

#include <cmath>
#include <cstdint>

extern "C" void eat_rmsnorm_reference(const float* x, const float* w,
  double* out, int64_t batch, int64_t hidden) {
  constexpr double eps = 1e-5;
  for (int64_t i = 0; i < batch; ++i) {
    const float* row = x + i * hidden;
    double sum = 0.0;
    for (int64_t j = 0; j < hidden; ++j)
      sum += static_cast<double>(row[j]) * static_cast<double>(row[j]);
    double inv = 1.0 / std::sqrt(sum / static_cast<double>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j)
      out[i * hidden + j]
        = static_cast<double>(row[j]) * inv * static_cast<double>(w[j]);
  }
}
