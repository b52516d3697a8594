#include "devices/kinds/uniform_fill.hpp"

#include <cmath>
#include <cstring>

namespace eat::devices {

namespace {

/// Element `i`'s value in [0, 1).
inline float unit(size_t i, uint32_t s0, uint32_t s1) {
  auto bits = uniform_bits(i, s0, s1);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// Vectorised with AVX2 where the processor has it (the default target,
// SSE2, has no 32-bit multiply of vectors). Neither target has a fused
// multiply-add, so `lo + scale * u` rounds twice, as the GPU runners'
// kernel rounds it (devices/gpu_runner/device_fill_kernel.hpp).
__attribute__((target_clones("avx2", "default"))) void fill_float32(
  float* out, size_t n, float lo, float scale, uint32_t s0, uint32_t s1) {
  for (size_t i = 0; i < n; ++i)
    out[i] = lo + scale * unit(i, s0, s1);
}

__attribute__((target_clones("avx2", "default"))) void fill_bfloat16(
  uint16_t* out, size_t n, float lo, float scale, uint32_t s0, uint32_t s1) {
  for (size_t i = 0; i < n; ++i) {
    float v = lo + scale * unit(i, s0, s1);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    out[i] = uniform_bfloat16(bits);
  }
}

} // namespace

void fill_uniform(
  dtype t, void* data, size_t count, double lo, double hi, uint64_t seed) {
  auto s0 = static_cast<uint32_t>(seed);
  auto s1 = static_cast<uint32_t>(seed >> 32);
  auto flo = static_cast<float>(lo);
  auto scale = static_cast<float>(hi - lo);
  switch (t) {
    case dtype::float32:
      fill_float32(static_cast<float*>(data), count, flo, scale, s0, s1);
      return;
    case dtype::bfloat16:
      fill_bfloat16(static_cast<uint16_t*>(data), count, flo, scale, s0, s1);
      return;
    case dtype::float16:
      for (size_t i = 0; i < count; ++i)
        store_from_double(t, data, i, flo + scale * unit(i, s0, s1));
      return;
    case dtype::int32:
    case dtype::int64: break;
  }
  for (size_t i = 0; i < count; ++i)
    store_from_double(t, data, i, std::floor(lo + (hi - lo) * unit(i, s0, s1)));
}

} // namespace eat::devices
