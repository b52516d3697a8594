// Baseline softmax: what a first-time author writes who knows to subtract
// the row maximum. Three passes per row with std::exp and one float
// accumulator. Speedups are measured against this.

#include <cmath>
#include <cstdint>

extern "C" void eat_softmax(
  const float* x, float* out, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    float max = x[i * cols];
    for (int64_t j = 1; j < cols; ++j)
      if (x[i * cols + j] > max)
        max = x[i * cols + j];
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      out[i * cols + j] = std::exp(x[i * cols + j] - max);
      sum += out[i * cols + j];
    }
    for (int64_t j = 0; j < cols; ++j)
      out[i * cols + j] /= sum;
  }
}
