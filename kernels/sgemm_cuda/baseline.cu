// Baseline GPU sgemm: one thread per element of C, the dot product read
// straight from global memory. C = A·B, row-major, A m×k, B k×n, C m×n;
// all pointers are device pointers (GPU entry ABI: docs/harness.md, "CUDA
// and HIP backends"). Speedups are measured against this.

#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void naive_gemm(const float* a, const float* b, float* c,
                           int64_t m, int64_t n, int64_t k) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (i >= m || j >= n)
    return;
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    sum += a[i * k + p] * b[p * n + j];
  c[i * n + j] = sum;
}

} // namespace

extern "C" int eat_gemm(const float* a, const float* b, float* c, int64_t m,
                        int64_t n, int64_t k, void* stream) {
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((n + 15) / 16),
                  static_cast<unsigned>((m + 15) / 16));
  naive_gemm<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a, b, c,
                                                                    m, n, k);
  return static_cast<int>(cudaGetLastError());
}
