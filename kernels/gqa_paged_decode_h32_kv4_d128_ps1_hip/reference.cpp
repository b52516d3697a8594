// Reference GQA paged decode (FlashInfer-Bench definition
// gqa_paged_decode_h32_kv4_d128_ps1, kind "definition", docs/tasks.md),
// computed in double from the bf16 inputs.
//
// 32 query heads share 4 KV heads: query head h reads KV head h / 8. For
// request b with tokens kv_indices[kv_indptr[b] .. kv_indptr[b+1]) (page
// size 1: a page is a token):
//   s[t]         = sm_scale · q[b][h] · k_cache[t][0][h / 8]
//   output[b][h] = sum_t softmax(s)[t] · v_cache[t][0][h / 8]
//   lse[b][h]    = log2(sum_t exp(s[t]))              (base 2, as FlashInfer)
// A request without tokens gets output 0 and lse -inf, as FlashInfer-Bench's
// Python reference does.
//
// inputs:  q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale
// outputs: output, lse
// axes:    batch_size, num_qo_heads, num_kv_heads, head_dim, num_pages,
//          page_size, len_indptr, num_kv_indices

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

constexpr int64_t qo_heads = 32;
constexpr int64_t kv_heads = 4;
constexpr int64_t group = qo_heads / kv_heads;
constexpr int64_t dim = 128;

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

/// a · b over dim elements in four partial sums: the order of additions
/// does not matter in double, and four independent chains run about 3x
/// faster than one.
double dot(const double* a, const double* b) {
  double part[4] = {0.0, 0.0, 0.0, 0.0};
  for (int64_t d = 0; d < dim; d += 4)
    for (int64_t l = 0; l < 4; ++l)
      part[l] += a[d + l] * b[d + l];
  return (part[0] + part[1]) + (part[2] + part[3]);
}

struct inputs {
  const uint16_t* q;
  const uint16_t* k;
  const uint16_t* v;
  const int32_t* indptr;
  const int32_t* indices;
  double sm_scale;
};

/// The K and V rows of one request's tokens, in request order, as double:
/// [t][kv head][dim].
struct request_rows {
  std::vector<double> k;
  std::vector<double> v;
};

request_rows gather(const inputs& in, int64_t begin, int64_t len) {
  request_rows rows;
  rows.k.reserve(static_cast<size_t>(len * kv_heads * dim));
  rows.v.reserve(static_cast<size_t>(len * kv_heads * dim));
  for (int64_t t = 0; t < len; ++t) {
    const int64_t page = in.indices[begin + t];
    for (int64_t i = 0; i < kv_heads * dim; ++i) {
      rows.k.push_back(from_bf16(in.k[page * kv_heads * dim + i]));
      rows.v.push_back(from_bf16(in.v[page * kv_heads * dim + i]));
    }
  }
  return rows;
}

/// Computes output[b][h] (dim) and lse[b][h] for query head h of a request
/// of len tokens whose rows are `rows`.
void decode_head(const inputs& in, const request_rows& rows, int64_t len,
                 int64_t b, int64_t h, double* out, double* lse) {
  const auto q = widen(in.q + (b * qo_heads + h) * dim, dim);
  const int64_t kv = h / group;
  std::vector<double> s(static_cast<size_t>(len));
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t t = 0; t < len; ++t) {
    s[t] = in.sm_scale * dot(q.data(), &rows.k[(t * kv_heads + kv) * dim]);
    max = std::max(max, s[t]);
  }
  double sum = 0.0;
  std::fill(out, out + dim, 0.0);
  for (int64_t t = 0; t < len; ++t) {
    s[t] = std::exp(s[t] - max);
    sum += s[t];
    const double* v = &rows.v[(t * kv_heads + kv) * dim];
    for (int64_t d = 0; d < dim; ++d)
      out[d] += s[t] * v[d];
  }
  for (int64_t d = 0; d < dim; ++d)
    out[d] /= sum;
  *lse = (max + std::log(sum)) / std::log(2.0);
}

/// Computes output[b] and lse[b] for request b.
void decode_request(const inputs& in, int64_t b, double* out, double* lse) {
  const int64_t begin = in.indptr[b];
  const int64_t len = in.indptr[b + 1] - begin;
  if (len <= 0) {
    std::fill(out, out + qo_heads * dim, 0.0);
    std::fill(lse, lse + qo_heads, -std::numeric_limits<double>::infinity());
    return;
  }
  const auto rows = gather(in, begin, len);
  for (int64_t h = 0; h < qo_heads; ++h)
    decode_head(in, rows, len, b, h, out + h * dim, lse + h);
}

} // namespace

extern "C" void eat_kernel_reference(
  const void* const* in, double* const* out, const int64_t* axes) {
  float sm_scale;
  std::memcpy(&sm_scale, in[5], sizeof(sm_scale));
  const inputs args{static_cast<const uint16_t*>(in[0]),
                    static_cast<const uint16_t*>(in[1]),
                    static_cast<const uint16_t*>(in[2]),
                    static_cast<const int32_t*>(in[3]),
                    static_cast<const int32_t*>(in[4]),
                    sm_scale};
  const int64_t batch = axes[0];
  for (int64_t b = 0; b < batch; ++b)
    decode_request(args, b, out[0] + b * qo_heads * dim, out[1] + b * qo_heads);
}
