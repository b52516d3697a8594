// Reference softmax for the correctness checks (docs/harness.md, kind
// "softmax"): each row of x, exp(x - max) / sum(exp(x - max)), in fp64.

#include <algorithm>
#include <cmath>
#include <cstdint>

extern "C" void eat_softmax_reference(
  const float* x, double* out, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = x + i * cols;
    double max = row[0];
    for (int64_t j = 1; j < cols; ++j)
      max = std::max(max, static_cast<double>(row[j]));
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      out[i * cols + j] = std::exp(static_cast<double>(row[j]) - max);
      sum += out[i * cols + j];
    }
    for (int64_t j = 0; j < cols; ++j)
      out[i * cols + j] /= sum;
  }
}
