// Reference RMS normalisation (FlashInfer-Bench definition rmsnorm_h4096,
// kind "definition", docs/tasks.md), computed on the CPU from the same bf16
// inputs: each bf16 widened exactly, the sum of squares in double, and
//
//   output[i][j] = x[i][j] / sqrt(mean_j(x[i][:]^2) + 1e-5) * weight[j]
//
// in double, as definition.json's Python reference does in float32
// ((x * inv_rms) * weight). hidden_size is taken from the axes (4096 in
// every workload of the definition), so the reference also runs on the
// small rows of a test.
//
// inputs:  hidden_states (bfloat16, batch_size×hidden_size),
//          weight (bfloat16, hidden_size)
// outputs: output (double here; bfloat16 for kernels),
//          batch_size×hidden_size
// axes:    batch_size, hidden_size

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

/// bfloat16 bits (the top half of a binary32) as a double, exactly.
double widen(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return static_cast<double>(f);
}

} // namespace

extern "C" void eat_kernel_reference(const void* const* inputs,
                                     double* const* outputs,
                                     const int64_t* axes) {
  constexpr double eps = 1e-5;
  const int64_t batch = axes[0];
  const int64_t hidden = axes[1];
  const auto* x = static_cast<const uint16_t*>(inputs[0]);
  const auto* w = static_cast<const uint16_t*>(inputs[1]);
  double* out = outputs[0];
  for (int64_t i = 0; i < batch; ++i) {
    const uint16_t* row = x + i * hidden;
    double sum = 0.0;
    for (int64_t j = 0; j < hidden; ++j)
      sum += widen(row[j]) * widen(row[j]);
    const double inv
      = 1.0 / std::sqrt(sum / static_cast<double>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j)
      out[i * hidden + j] = widen(row[j]) * inv * widen(w[j]);
  }
}
