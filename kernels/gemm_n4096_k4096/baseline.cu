// Baseline fp16 GEMM C = A·Bᵀ on an NVIDIA GPU (FlashInfer-Bench definition
// gemm_n4096_k4096): one thread per element of C, the dot product read
// straight from global memory and accumulated in float, then rounded to
// fp16. A is M×K, B is N×K, C is M×N, row-major, device pointers (GPU entry
// ABI of definition tasks: docs/harness.md, "CUDA and HIP backends").
// Speedups are measured against this.

#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

__global__ void naive_gemm(const __half* a, const __half* b, __half* c,
                           int64_t m, int64_t n, int64_t k) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (i >= m || j >= n)
    return;
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    sum += __half2float(a[i * k + p]) * __half2float(b[j * k + p]);
  c[i * n + j] = __float2half_rn(sum);
}

} // namespace

extern "C" int eat_kernel(const void* const* inputs, void* const* outputs,
                          const int64_t* axes, void* stream) {
  const int64_t m = axes[0];
  const int64_t n = axes[1];
  const int64_t k = axes[2];
  if (m == 0)
    return 0;
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((n + 15) / 16),
                  static_cast<unsigned>((m + 15) / 16));
  naive_gemm<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const __half*>(inputs[0]),
      static_cast<const __half*>(inputs[1]), static_cast<__half*>(outputs[0]),
      m, n, k);
  return static_cast<int>(cudaGetLastError());
}
