// Reference row-wise softmax (eat's definition "softmax", kind
// "definition", docs/tasks.md), computed on the CPU in double from the same
// float32 inputs: per row the maximum, the sum of exp(x - max), then
// exp(x - max) / sum. The GPU tasks softmax_cuda and softmax_hip share it.
//
// inputs:  x (float32, rows×cols, row-major)
// outputs: output (double here; float32 for kernels), rows×cols
// axes:    rows, cols

#include <algorithm>
#include <cmath>
#include <cstdint>

extern "C" void eat_kernel_reference(const void* const* inputs,
                                     double* const* outputs,
                                     const int64_t* axes) {
  const int64_t rows = axes[0];
  const int64_t cols = axes[1];
  const auto* x = static_cast<const float*>(inputs[0]);
  double* out = outputs[0];
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = x + i * cols;
    double* dst = out + i * cols;
    double max = -INFINITY;
    for (int64_t j = 0; j < cols; ++j)
      max = std::max(max, static_cast<double>(row[j]));
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      dst[j] = std::exp(static_cast<double>(row[j]) - max);
      sum += dst[j];
    }
    for (int64_t j = 0; j < cols; ++j)
      dst[j] /= sum;
  }
}
