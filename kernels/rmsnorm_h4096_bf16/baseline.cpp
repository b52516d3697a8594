// Baseline bf16 RMS normalisation on the CPU: what a first-time author
// writes. Each bf16 widened to float where it is used, one float
// accumulator for the sum of squares (a serial chain the compiler may not
// reorder), then a second pass that scales and rounds each element to bf16
// one at a time. Speedups are measured against this. Semantics:
// ../rmsnorm_h4096_cuda/reference.cpp.

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

float bf16_to_float(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

/// Rounds to the nearest bf16, ties to even.
uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN stays NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace

extern "C" void eat_kernel(
  const void* const* inputs, void* const* outputs, const int64_t* axes) {
  const auto* x = static_cast<const uint16_t*>(inputs[0]);
  const auto* w = static_cast<const uint16_t*>(inputs[1]);
  auto* out = static_cast<uint16_t*>(outputs[0]);
  const int64_t batch = axes[0];
  const int64_t hidden = axes[1];
  const float eps = 1e-5f;
  for (int64_t i = 0; i < batch; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < hidden; ++j) {
      float v = bf16_to_float(x[i * hidden + j]);
      sum += v * v;
    }
    float inv = 1.0f / std::sqrt(sum / static_cast<float>(hidden) + eps);
    for (int64_t j = 0; j < hidden; ++j)
      out[i * hidden + j] = float_to_bf16(
        bf16_to_float(x[i * hidden + j]) * inv * bf16_to_float(w[j]));
  }
}
