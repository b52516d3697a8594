// Baseline MLA paged decode on an AMD GPU (FlashInfer-Bench definition
// mla_paged_decode_h16_ckv512_kpe64_ps1, kind "definition"): what a
// first-time author writes. One block of 128 threads per (request, head);
// the request's tokens one after another: each token's logit is a block
// reduction of partial dot products (4 of the 512 ckv dimensions and at
// most one of the 64 kpe dimensions per thread), followed by an online
// softmax update of the thread's 4 output dimensions. No reuse of a KV row
// across the 16 heads, no overlap of loads and arithmetic. Inputs bf16,
// arithmetic in float, output rounded to bf16, lse in base 2.
//
// inputs:  q_nope, q_pe, ckv_cache, kpe_cache, kv_indptr, kv_indices,
//          sm_scale (a one-element device buffer)
// outputs: output, lse
// axes:    batch_size, num_qo_heads, head_dim_ckv, head_dim_kpe, page_size,
//          num_pages, len_indptr, num_kv_indices
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

constexpr int heads = 16;
constexpr int dim_ckv = 512;
constexpr int dim_kpe = 64;
constexpr int threads = 128;
constexpr int per_thread = dim_ckv / threads;

__global__ void __launch_bounds__(threads)
naive_decode(const bf16_bits* q_nope, const bf16_bits* q_pe,
             const bf16_bits* ckv, const bf16_bits* kpe,
             const int32_t* indptr, const int32_t* indices,
             const float* sm_scale, bf16_bits* out, float* lse) {
  __shared__ float partial[threads];
  const int b = blockIdx.x / heads;
  const int h = blockIdx.x % heads;
  const int tid = threadIdx.x;
  const int64_t q = (int64_t{b} * heads + h);
  float qn[per_thread];
  for (int i = 0; i < per_thread; ++i)
    qn[i] = to_float(q_nope[q * dim_ckv + tid + i * threads]);
  const float qp = tid < dim_kpe ? to_float(q_pe[q * dim_kpe + tid])
                                 : 0.0f;
  const float scale = *sm_scale;
  float max = -INFINITY;
  float sum = 0.0f;
  float acc[per_thread] = {};
  for (int t = indptr[b]; t < indptr[b + 1]; ++t) {
    const int64_t page = indices[t];
    float kv[per_thread];
    float dot = 0.0f;
    for (int i = 0; i < per_thread; ++i) {
      kv[i] = to_float(ckv[page * dim_ckv + tid + i * threads]);
      dot += qn[i] * kv[i];
    }
    if (tid < dim_kpe)
      dot += qp * to_float(kpe[page * dim_kpe + tid]);
    partial[tid] = dot;
    __syncthreads();
    for (int stride = threads / 2; stride > 0; stride /= 2) {
      if (tid < stride)
        partial[tid] += partial[tid + stride];
      __syncthreads();
    }
    const float s = scale * partial[0];
    __syncthreads();
    const float next = fmaxf(max, s);
    const float shrink = expf(max - next);
    const float p = expf(s - next);
    sum = sum * shrink + p;
    for (int i = 0; i < per_thread; ++i)
      acc[i] = acc[i] * shrink + p * kv[i];
    max = next;
  }
  const bool empty = indptr[b + 1] <= indptr[b];
  for (int i = 0; i < per_thread; ++i)
    out[q * dim_ckv + tid + i * threads]
        = to_bf16(empty ? 0.0f : acc[i] / sum);
  if (tid == 0)
    lse[q] = empty ? -INFINITY : (max + logf(sum)) / logf(2.0f);
}

} // namespace

extern "C" int eat_kernel(const void* const* inputs, void* const* outputs,
                          const int64_t* axes, void* stream) {
  const int64_t batch = axes[0];
  if (batch == 0)
    return 0;
  naive_decode<<<static_cast<unsigned>(batch * heads), threads, 0,
                 static_cast<hipStream_t>(stream)>>>(
      static_cast<const bf16_bits*>(inputs[0]),
      static_cast<const bf16_bits*>(inputs[1]),
      static_cast<const bf16_bits*>(inputs[2]),
      static_cast<const bf16_bits*>(inputs[3]),
      static_cast<const int32_t*>(inputs[4]),
      static_cast<const int32_t*>(inputs[5]),
      static_cast<const float*>(inputs[6]),
      static_cast<bf16_bits*>(outputs[0]), static_cast<float*>(outputs[1]));
  return static_cast<int>(hipGetLastError());
}
