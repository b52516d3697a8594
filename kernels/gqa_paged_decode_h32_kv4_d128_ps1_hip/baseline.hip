// Baseline GQA paged decode on an AMD GPU (FlashInfer-Bench definition
// gqa_paged_decode_h32_kv4_d128_ps1, kind "definition"): what a first-time
// author writes. One block of 128 threads per (request, query head), one
// thread per head dimension; the request's tokens one after another: each
// token's logit is a block reduction of the 128 products, followed by an
// online softmax update of the thread's output dimension. Each K and V row
// is read once per query head of its group (8 times); no overlap of loads
// and arithmetic. Inputs bf16, arithmetic in float, output rounded to bf16,
// lse in base 2. Semantics: reference.cpp.
//
// inputs:  q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale (a
//          one-element device buffer)
// outputs: output, lse
// axes:    batch_size, num_qo_heads, num_kv_heads, head_dim, num_pages,
//          page_size, len_indptr, num_kv_indices
// The HIP version of the CUDA task's baseline.cu, for any wavefront size
// (block reductions go through shared memory). Device pointers; GPU entry
// ABI: docs/harness.md, "CUDA and HIP backends".

#include <cmath>
#include <cstdint>

#include <hip/hip_runtime.h>

namespace {

/// bf16 as its bits: Debian's HIP has no __hip_bfloat16 arithmetic
/// helpers, so the conversions are written out (as the CPU baselines do).
using bf16_bits = uint16_t;

__device__ inline float to_float(bf16_bits b) {
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
}

/// Rounds to the nearest bf16, ties to even; NaN stays NaN.
__device__ inline bf16_bits to_bf16(float f) {
  uint32_t bits = __float_as_uint(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<bf16_bits>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<bf16_bits>(bits >> 16);
}

constexpr int qo_heads = 32;
constexpr int kv_heads = 4;
constexpr int group = qo_heads / kv_heads;
constexpr int dim = 128;

__global__ void __launch_bounds__(dim)
naive_decode(const bf16_bits* q, const bf16_bits* k_cache,
             const bf16_bits* v_cache, const int32_t* indptr,
             const int32_t* indices, const float* sm_scale,
             bf16_bits* out, float* lse) {
  __shared__ float partial[dim];
  const int b = blockIdx.x / qo_heads;
  const int h = blockIdx.x % qo_heads;
  const int g = h / group;
  const int d = threadIdx.x;
  const int64_t row = int64_t{b} * qo_heads + h;
  const float qd = to_float(q[row * dim + d]);
  const float scale = *sm_scale;
  float max = -INFINITY;
  float sum = 0.0f;
  float acc = 0.0f;
  for (int t = indptr[b]; t < indptr[b + 1]; ++t) {
    const int64_t at = (int64_t{indices[t]} * kv_heads + g) * dim + d;
    partial[d] = qd * to_float(k_cache[at]);
    __syncthreads();
    for (int stride = dim / 2; stride > 0; stride /= 2) {
      if (d < stride)
        partial[d] += partial[d + stride];
      __syncthreads();
    }
    const float s = scale * partial[0];
    __syncthreads();
    const float next = fmaxf(max, s);
    const float shrink = expf(max - next);
    const float p = expf(s - next);
    sum = sum * shrink + p;
    acc = acc * shrink + p * to_float(v_cache[at]);
    max = next;
  }
  const bool empty = indptr[b + 1] <= indptr[b];
  out[row * dim + d] = to_bf16(empty ? 0.0f : acc / sum);
  if (d == 0)
    lse[row] = empty ? -INFINITY : (max + logf(sum)) / logf(2.0f);
}

} // namespace

extern "C" int eat_kernel(const void* const* inputs, void* const* outputs,
                          const int64_t* axes, void* stream) {
  const int64_t batch = axes[0];
  if (batch == 0)
    return 0;
  naive_decode<<<static_cast<unsigned>(batch * qo_heads), dim, 0,
                 static_cast<hipStream_t>(stream)>>>(
      static_cast<const bf16_bits*>(inputs[0]),
      static_cast<const bf16_bits*>(inputs[1]),
      static_cast<const bf16_bits*>(inputs[2]),
      static_cast<const int32_t*>(inputs[3]),
      static_cast<const int32_t*>(inputs[4]),
      static_cast<const float*>(inputs[5]),
      static_cast<bf16_bits*>(outputs[0]), static_cast<float*>(outputs[1]));
  return static_cast<int>(hipGetLastError());
}
