// Reference GEMM C = A·Bᵀ (FlashInfer-Bench definition gemm_n4096_k4096,
// kind "definition", docs/tasks.md), computed on the CPU from the same fp16
// inputs. A is M×K, B is N×K (a weight matrix in nn.Linear layout), C is
// M×N, all row-major. The product of two fp16 values is exact in float (11
// + 11 significant bits), so each product is formed in float and summed in
// double: as exact as an all-double computation, and fast enough for
// M = 256 at K = 4096 on one core.
//
// inputs:  A (float16, M×K), B (float16, N×K)
// outputs: C (double here; float16 for kernels), M×N
// axes:    M, N, K

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

/// IEEE binary16 to float (exact).
float from_half(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {
    // Subnormal: m · 2^-24, normalised.
    int e = -1;
    uint32_t m = man;
    while ((m & 0x400u) == 0) {
      m <<= 1;
      ++e;
    }
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

std::vector<float> widen(const void* p, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(p);
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = from_half(h[i]);
  return out;
}

/// Sum of a[p]·b[p] over p < k, in eight independent double lanes.
double dot(const float* a, const float* b, int64_t k) {
  double lane[8] = {};
  int64_t p = 0;
  for (; p + 8 <= k; p += 8)
    for (int l = 0; l < 8; ++l)
      lane[l] += static_cast<double>(a[p + l] * b[p + l]);
  for (; p < k; ++p)
    lane[0] += static_cast<double>(a[p] * b[p]);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3]))
         + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

} // namespace

extern "C" void eat_kernel_reference(const void* const* inputs,
                                     double* const* outputs,
                                     const int64_t* axes) {
  const int64_t m = axes[0];
  const int64_t n = axes[1];
  const int64_t k = axes[2];
  const auto a = widen(inputs[0], m * k);
  const auto b = widen(inputs[1], n * k);
  double* c = outputs[0];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] = dot(&a[static_cast<size_t>(i * k)],
                         &b[static_cast<size_t>(j * k)], k);
}
