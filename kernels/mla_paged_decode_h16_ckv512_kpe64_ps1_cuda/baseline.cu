// Baseline MLA paged decode on an NVIDIA GPU (FlashInfer-Bench definition
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
// Device pointers; GPU entry ABI: docs/harness.md, "CUDA and HIP backends".

#include <cmath>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace {

constexpr int heads = 16;
constexpr int dim_ckv = 512;
constexpr int dim_kpe = 64;
constexpr int threads = 128;
constexpr int per_thread = dim_ckv / threads;

__global__ void __launch_bounds__(threads)
naive_decode(const __nv_bfloat16* q_nope, const __nv_bfloat16* q_pe,
             const __nv_bfloat16* ckv, const __nv_bfloat16* kpe,
             const int32_t* indptr, const int32_t* indices,
             const float* sm_scale, __nv_bfloat16* out, float* lse) {
  __shared__ float partial[threads];
  const int b = blockIdx.x / heads;
  const int h = blockIdx.x % heads;
  const int tid = threadIdx.x;
  const int64_t q = (int64_t{b} * heads + h);
  float qn[per_thread];
  for (int i = 0; i < per_thread; ++i)
    qn[i] = __bfloat162float(q_nope[q * dim_ckv + tid + i * threads]);
  const float qp = tid < dim_kpe ? __bfloat162float(q_pe[q * dim_kpe + tid])
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
      kv[i] = __bfloat162float(ckv[page * dim_ckv + tid + i * threads]);
      dot += qn[i] * kv[i];
    }
    if (tid < dim_kpe)
      dot += qp * __bfloat162float(kpe[page * dim_kpe + tid]);
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
        = __float2bfloat16_rn(empty ? 0.0f : acc[i] / sum);
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
                 static_cast<cudaStream_t>(stream)>>>(
      static_cast<const __nv_bfloat16*>(inputs[0]),
      static_cast<const __nv_bfloat16*>(inputs[1]),
      static_cast<const __nv_bfloat16*>(inputs[2]),
      static_cast<const __nv_bfloat16*>(inputs[3]),
      static_cast<const int32_t*>(inputs[4]),
      static_cast<const int32_t*>(inputs[5]),
      static_cast<const float*>(inputs[6]),
      static_cast<__nv_bfloat16*>(outputs[0]), static_cast<float*>(outputs[1]));
  return static_cast<int>(cudaGetLastError());
}
