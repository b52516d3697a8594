// Baseline GQA paged decode on an NVIDIA GPU (FlashInfer-Bench definition
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
// Device pointers; GPU entry ABI: docs/harness.md, "CUDA and HIP backends".

#include <cmath>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace {

constexpr int qo_heads = 32;
constexpr int kv_heads = 4;
constexpr int group = qo_heads / kv_heads;
constexpr int dim = 128;

__global__ void __launch_bounds__(dim)
naive_decode(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
             const __nv_bfloat16* v_cache, const int32_t* indptr,
             const int32_t* indices, const float* sm_scale,
             __nv_bfloat16* out, float* lse) {
  __shared__ float partial[dim];
  const int b = blockIdx.x / qo_heads;
  const int h = blockIdx.x % qo_heads;
  const int g = h / group;
  const int d = threadIdx.x;
  const int64_t row = int64_t{b} * qo_heads + h;
  const float qd = __bfloat162float(q[row * dim + d]);
  const float scale = *sm_scale;
  float max = -INFINITY;
  float sum = 0.0f;
  float acc = 0.0f;
  for (int t = indptr[b]; t < indptr[b + 1]; ++t) {
    const int64_t at = (int64_t{indices[t]} * kv_heads + g) * dim + d;
    partial[d] = qd * __bfloat162float(k_cache[at]);
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
    acc = acc * shrink + p * __bfloat162float(v_cache[at]);
    max = next;
  }
  const bool empty = indptr[b + 1] <= indptr[b];
  out[row * dim + d] = __float2bfloat16_rn(empty ? 0.0f : acc / sum);
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
                 static_cast<cudaStream_t>(stream)>>>(
      static_cast<const __nv_bfloat16*>(inputs[0]),
      static_cast<const __nv_bfloat16*>(inputs[1]),
      static_cast<const __nv_bfloat16*>(inputs[2]),
      static_cast<const int32_t*>(inputs[3]),
      static_cast<const int32_t*>(inputs[4]),
      static_cast<const float*>(inputs[5]),
      static_cast<__nv_bfloat16*>(outputs[0]), static_cast<float*>(outputs[1]));
  return static_cast<int>(cudaGetLastError());
}
