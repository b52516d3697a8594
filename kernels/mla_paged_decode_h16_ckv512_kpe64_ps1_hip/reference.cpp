// Reference MLA paged decode (FlashInfer-Bench definition
// mla_paged_decode_h16_ckv512_kpe64_ps1, kind "definition", docs/tasks.md),
// computed in double from the bf16 inputs.
//
// For request b with tokens kv_indices[kv_indptr[b] .. kv_indptr[b+1]) (page
// size 1: a page is a token) and query head h:
//   s[t]      = sm_scale · (q_nope[b][h] · ckv[t] + q_pe[b][h] · kpe[t])
//   output[b][h] = sum_t softmax(s)[t] · ckv[t]      (ckv is also the value)
//   lse[b][h]    = log2(sum_t exp(s[t]))              (base 2, as FlashInfer)
// A request without tokens gets output 0 and lse -inf, as FlashInfer-Bench's
// Python reference does.
//
// inputs:  q_nope, q_pe, ckv_cache, kpe_cache, kv_indptr, kv_indices, sm_scale
// outputs: output, lse
// axes:    batch_size, num_qo_heads, head_dim_ckv, head_dim_kpe, page_size,
//          num_pages, len_indptr, num_kv_indices

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

constexpr int64_t heads = 16;
constexpr int64_t dim_ckv = 512;
constexpr int64_t dim_kpe = 64;

double from_bf16(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

/// Converts n bf16 values at p to double.
std::vector<double> widen(const uint16_t* p, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[i] = from_bf16(p[i]);
  return out;
}

/// a · b over n elements (n a multiple of 4), in four partial sums: the
/// order of additions does not matter in double, and four independent
/// chains run about 3x faster than one.
double dot(const double* a, const double* b, int64_t n) {
  double part[4] = {0.0, 0.0, 0.0, 0.0};
  for (int64_t i = 0; i < n; i += 4)
    for (int64_t l = 0; l < 4; ++l)
      part[l] += a[i + l] * b[i + l];
  return (part[0] + part[1]) + (part[2] + part[3]);
}

struct inputs {
  const uint16_t* q_nope;
  const uint16_t* q_pe;
  const uint16_t* ckv;
  const uint16_t* kpe;
  const int32_t* indptr;
  const int32_t* indices;
  double sm_scale;
};

/// Computes output[b] (heads × dim_ckv) and lse[b] (heads) for request b.
void decode_request(const inputs& in, int64_t b, double* out, double* lse) {
  const int64_t begin = in.indptr[b];
  const int64_t len = in.indptr[b + 1] - begin;
  if (len <= 0) {
    std::fill(out, out + heads * dim_ckv, 0.0);
    std::fill(lse, lse + heads, -std::numeric_limits<double>::infinity());
    return;
  }
  const auto qn = widen(in.q_nope + b * heads * dim_ckv, heads * dim_ckv);
  const auto qp = widen(in.q_pe + b * heads * dim_kpe, heads * dim_kpe);
  // Rows of the request's tokens, in request order.
  std::vector<double> kc(static_cast<size_t>(len * dim_ckv));
  std::vector<double> kp(static_cast<size_t>(len * dim_kpe));
  for (int64_t t = 0; t < len; ++t) {
    const int64_t page = in.indices[begin + t];
    for (int64_t d = 0; d < dim_ckv; ++d)
      kc[t * dim_ckv + d] = from_bf16(in.ckv[page * dim_ckv + d]);
    for (int64_t d = 0; d < dim_kpe; ++d)
      kp[t * dim_kpe + d] = from_bf16(in.kpe[page * dim_kpe + d]);
  }
  std::vector<double> s(static_cast<size_t>(len));
  for (int64_t h = 0; h < heads; ++h) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t < len; ++t) {
      s[t] = in.sm_scale
             * (dot(qn.data() + h * dim_ckv, kc.data() + t * dim_ckv, dim_ckv)
                + dot(qp.data() + h * dim_kpe, kp.data() + t * dim_kpe,
                      dim_kpe));
      max = std::max(max, s[t]);
    }
    double sum = 0.0;
    for (int64_t t = 0; t < len; ++t) {
      s[t] = std::exp(s[t] - max);
      sum += s[t];
    }
    double* o = out + h * dim_ckv;
    std::fill(o, o + dim_ckv, 0.0);
    for (int64_t t = 0; t < len; ++t)
      for (int64_t d = 0; d < dim_ckv; ++d)
        o[d] += s[t] * kc[t * dim_ckv + d];
    for (int64_t d = 0; d < dim_ckv; ++d)
      o[d] /= sum;
    lse[h] = (max + std::log(sum)) / std::log(2.0);
  }
}

} // namespace

extern "C" void eat_kernel_reference(
  const void* const* in, double* const* out, const int64_t* axes) {
  float sm_scale;
  std::memcpy(&sm_scale, in[6], sizeof(sm_scale));
  const inputs args{static_cast<const uint16_t*>(in[0]),
                    static_cast<const uint16_t*>(in[1]),
                    static_cast<const uint16_t*>(in[2]),
                    static_cast<const uint16_t*>(in[3]),
                    static_cast<const int32_t*>(in[4]),
                    static_cast<const int32_t*>(in[5]),
                    sm_scale};
  const int64_t batch = axes[0];
  for (int64_t b = 0; b < batch; ++b)
    decode_request(args, b, out[0] + b * heads * dim_ckv, out[1] + b * heads);
}
