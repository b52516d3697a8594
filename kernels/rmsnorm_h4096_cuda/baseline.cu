// Baseline RMS normalisation on an NVIDIA GPU (FlashInfer-Bench definition
// rmsnorm_h4096, kind "definition"): what a first-time author writes. One
// block of 256 threads per row; each thread sums the squares of its
// strided elements (j = thread, thread + 256, ...) with scalar bf16 loads,
// the block adds the 256 sums by a shared-memory tree (a barrier per
// step), and each thread scales its strided elements, reading x again:
// output = x * (1 / sqrt(mean(x^2) + 1e-5)) * weight. Arithmetic in float,
// output rounded to bf16 (to nearest even). Semantics: reference.cpp.
//
// inputs:  hidden_states (batch_size×hidden_size), weight (hidden_size)
// outputs: output (batch_size×hidden_size); all bf16, row-major
// axes:    batch_size, hidden_size
// Device pointers; GPU entry ABI: docs/harness.md, "CUDA and HIP backends".

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace {

constexpr int threads = 256;
constexpr float eps = 1e-5f;

__global__ void __launch_bounds__(threads)
naive_rmsnorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
              __nv_bfloat16* out, int hidden) {
  __shared__ float partial[threads];
  const int t = threadIdx.x;
  const int64_t row = int64_t{blockIdx.x} * hidden;
  float sum = 0.0f;
  for (int j = t; j < hidden; j += threads) {
    const float v = __bfloat162float(x[row + j]);
    sum += v * v;
  }
  partial[t] = sum;
  __syncthreads();
  for (int stride = threads / 2; stride > 0; stride /= 2) {
    if (t < stride)
      partial[t] += partial[t + stride];
    __syncthreads();
  }
  const float inv = rsqrtf(partial[0] / static_cast<float>(hidden) + eps);
  for (int j = t; j < hidden; j += threads)
    out[row + j] = __float2bfloat16_rn(__bfloat162float(x[row + j]) * inv
                                       * __bfloat162float(weight[j]));
}

} // namespace

extern "C" int eat_kernel(const void* const* inputs, void* const* outputs,
                          const int64_t* axes, void* stream) {
  const int64_t batch = axes[0];
  const int64_t hidden = axes[1];
  if (batch == 0)
    return 0;
  naive_rmsnorm<<<static_cast<unsigned>(batch), threads, 0,
                  static_cast<cudaStream_t>(stream)>>>(
      static_cast<const __nv_bfloat16*>(inputs[0]),
      static_cast<const __nv_bfloat16*>(inputs[1]),
      static_cast<__nv_bfloat16*>(outputs[0]), static_cast<int>(hidden));
  return static_cast<int>(cudaGetLastError());
}
