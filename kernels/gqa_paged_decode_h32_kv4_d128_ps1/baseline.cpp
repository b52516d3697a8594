// Baseline GQA paged decode: what a first-time author writes. Head by head,
// token by token: bf16 converted to float on every use, scalar float dot
// products, the logits stored, a plain three-pass softmax, then the weighted
// sum of the value rows. Each K and V row is read once per query head of
// its group (8 times). Speedups are measured against this. Semantics:
// reference.cpp.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

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
  const uint16_t* q = static_cast<const uint16_t*>(inputs[0]);
  const uint16_t* k_cache = static_cast<const uint16_t*>(inputs[1]);
  const uint16_t* v_cache = static_cast<const uint16_t*>(inputs[2]);
  const int32_t* indptr = static_cast<const int32_t*>(inputs[3]);
  const int32_t* indices = static_cast<const int32_t*>(inputs[4]);
  float sm_scale;
  std::memcpy(&sm_scale, inputs[5], sizeof(sm_scale));
  uint16_t* output = static_cast<uint16_t*>(outputs[0]);
  float* lse = static_cast<float*>(outputs[1]);
  const int64_t batch = axes[0];
  const int64_t qo_heads = axes[1]; // 32
  const int64_t kv_heads = axes[2]; // 4
  const int64_t dim = axes[3];      // 128
  const int64_t group = qo_heads / kv_heads;

  for (int64_t b = 0; b < batch; ++b) {
    const int64_t begin = indptr[b];
    const int64_t len = indptr[b + 1] - begin;
    for (int64_t h = 0; h < qo_heads; ++h) {
      const uint16_t* qh = q + (b * qo_heads + h) * dim;
      uint16_t* out = output + (b * qo_heads + h) * dim;
      const int64_t kv = h / group;
      if (len <= 0) {
        for (int64_t d = 0; d < dim; ++d)
          out[d] = 0;
        lse[b * qo_heads + h] = -INFINITY;
        continue;
      }
      std::vector<float> logits(len);
      for (int64_t t = 0; t < len; ++t) {
        const uint16_t* k = k_cache + (indices[begin + t] * kv_heads + kv) * dim;
        float s = 0.0f;
        for (int64_t d = 0; d < dim; ++d)
          s += bf16_to_float(qh[d]) * bf16_to_float(k[d]);
        logits[t] = s * sm_scale;
      }
      float max = logits[0];
      for (int64_t t = 1; t < len; ++t)
        if (logits[t] > max)
          max = logits[t];
      float sum = 0.0f;
      for (int64_t t = 0; t < len; ++t) {
        logits[t] = std::exp(logits[t] - max);
        sum += logits[t];
      }
      std::vector<float> acc(dim, 0.0f);
      for (int64_t t = 0; t < len; ++t) {
        const uint16_t* v = v_cache + (indices[begin + t] * kv_heads + kv) * dim;
        for (int64_t d = 0; d < dim; ++d)
          acc[d] += logits[t] * bf16_to_float(v[d]);
      }
      for (int64_t d = 0; d < dim; ++d)
        out[d] = float_to_bf16(acc[d] / sum);
      lse[b * qo_heads + h] = (max + std::log(sum)) / std::log(2.0f);
    }
  }
}
