// Baseline row-wise softmax on an AMD GPU (eat's definition "softmax",
// kind "definition"): what a first-time author writes. One block of 256
// threads per row and three passes over the row in global memory with
// scalar loads: the maximum by a shared-memory tree reduction, the sum of
// expf(x - max) by another, then out = expf(x - max) / sum. Speedups are
// measured against this. Semantics: ../softmax_cuda/reference.cpp.
//
// inputs:  x (float32, rows×cols, row-major)
// outputs: output (float32, rows×cols)
// axes:    rows, cols
// The HIP version of ../softmax_cuda/baseline.cu, correct for any wavefront
// size (its reductions go through shared memory). Device pointers and a
// stream (GPU entry ABI: docs/harness.md, "CUDA and HIP backends").

#include <cmath>
#include <cstdint>

#include <hip/hip_runtime.h>

namespace {

constexpr int threads = 256;

__global__ void __launch_bounds__(threads)
naive_softmax(const float* x, float* out, int64_t cols) {
  __shared__ float partial[threads];
  const int t = threadIdx.x;
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  float* dst = out + static_cast<int64_t>(blockIdx.x) * cols;

  float max = -INFINITY;
  for (int64_t j = t; j < cols; j += threads)
    max = fmaxf(max, row[j]);
  partial[t] = max;
  __syncthreads();
  for (int stride = threads / 2; stride > 0; stride /= 2) {
    if (t < stride)
      partial[t] = fmaxf(partial[t], partial[t + stride]);
    __syncthreads();
  }
  max = partial[0];
  __syncthreads(); // every thread has read partial[0]

  float sum = 0.0f;
  for (int64_t j = t; j < cols; j += threads)
    sum += expf(row[j] - max);
  partial[t] = sum;
  __syncthreads();
  for (int stride = threads / 2; stride > 0; stride /= 2) {
    if (t < stride)
      partial[t] += partial[t + stride];
    __syncthreads();
  }
  sum = partial[0];

  for (int64_t j = t; j < cols; j += threads)
    dst[j] = expf(row[j] - max) / sum;
}

} // namespace

extern "C" int eat_kernel(const void* const* inputs, void* const* outputs,
                          const int64_t* axes, void* stream) {
  const int64_t rows = axes[0];
  const int64_t cols = axes[1];
  if (rows == 0 || cols == 0)
    return 0;
  naive_softmax<<<static_cast<unsigned>(rows), threads, 0,
                  static_cast<hipStream_t>(stream)>>>(
      static_cast<const float*>(inputs[0]), static_cast<float*>(outputs[0]),
      cols);
  return static_cast<int>(hipGetLastError());
}
