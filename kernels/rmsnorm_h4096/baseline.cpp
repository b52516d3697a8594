// Baseline rmsnorm: what a first-time author writes. One float accumulator
// for the sum of squares (a serial dependency chain the compiler may not
// reorder), then a second pass that scales. Speedups are measured against
// this.

#include <cmath>
#include <cstdint>

extern "C" void eat_rmsnorm(const float* x, const float* w, float* out,
  int64_t batch, int64_t hidden) {
  const float eps = 1e-5f;
  for (int64_t i = 0; i < batch; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < hidden; ++j)
      sum += x[i * hidden + j] * x[i * hidden + j];
    float inv = 1.0f / std::sqrt(sum / static_cast<float>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j)
      out[i * hidden + j] = x[i * hidden + j] * inv * w[j];
  }
}
