// Baseline MLA paged decode: what a first-time author writes. Head by head,
// token by token: bf16 converted to float on every use, scalar float dot
// products, the logits stored, a plain three-pass softmax, then the weighted
// sum of the ckv rows. Every ckv row is read twice per head (32 times).
// Speedups are measured against this. Semantics: reference.cpp.

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
  const uint16_t* q_nope = static_cast<const uint16_t*>(inputs[0]);
  const uint16_t* q_pe = static_cast<const uint16_t*>(inputs[1]);
  const uint16_t* ckv = static_cast<const uint16_t*>(inputs[2]);
  const uint16_t* kpe = static_cast<const uint16_t*>(inputs[3]);
  const int32_t* indptr = static_cast<const int32_t*>(inputs[4]);
  const int32_t* indices = static_cast<const int32_t*>(inputs[5]);
  float sm_scale;
  std::memcpy(&sm_scale, inputs[6], sizeof(sm_scale));
  uint16_t* output = static_cast<uint16_t*>(outputs[0]);
  float* lse = static_cast<float*>(outputs[1]);
  const int64_t batch = axes[0];
  const int64_t heads = axes[1];   // 16
  const int64_t dim_ckv = axes[2]; // 512
  const int64_t dim_kpe = axes[3]; // 64

  for (int64_t b = 0; b < batch; ++b) {
    const int64_t begin = indptr[b];
    const int64_t len = indptr[b + 1] - begin;
    for (int64_t h = 0; h < heads; ++h) {
      const uint16_t* qn = q_nope + (b * heads + h) * dim_ckv;
      const uint16_t* qp = q_pe + (b * heads + h) * dim_kpe;
      uint16_t* out = output + (b * heads + h) * dim_ckv;
      if (len <= 0) {
        for (int64_t d = 0; d < dim_ckv; ++d)
          out[d] = 0;
        lse[b * heads + h] = -INFINITY;
        continue;
      }
      std::vector<float> logits(len);
      for (int64_t t = 0; t < len; ++t) {
        const int64_t page = indices[begin + t];
        float s = 0.0f;
        for (int64_t d = 0; d < dim_ckv; ++d)
          s += bf16_to_float(qn[d]) * bf16_to_float(ckv[page * dim_ckv + d]);
        for (int64_t d = 0; d < dim_kpe; ++d)
          s += bf16_to_float(qp[d]) * bf16_to_float(kpe[page * dim_kpe + d]);
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
      std::vector<float> acc(dim_ckv, 0.0f);
      for (int64_t t = 0; t < len; ++t) {
        const int64_t page = indices[begin + t];
        for (int64_t d = 0; d < dim_ckv; ++d)
          acc[d] += logits[t] * bf16_to_float(ckv[page * dim_ckv + d]);
      }
      for (int64_t d = 0; d < dim_ckv; ++d)
        out[d] = float_to_bf16(acc[d] / sum);
      lse[b * heads + h] = (max + std::log(sum)) / std::log(2.0f);
    }
  }
}
