// Expert baseline: cuBLAS's fp16 GEMM with fp32 accumulation (cublasGemmEx,
// CUBLAS_COMPUTE_32F), reported next to results, never a speedup's base.
// C = A·Bᵀ with A M×K, B N×K, C M×N row-major; in cuBLAS's column-major
// view that is Cᵀ (N×M) = op(B)·Aᵀ with op = transpose, so B is passed
// first with CUBLAS_OP_T (leading dimension K), A second with CUBLAS_OP_N
// (leading dimension K), and C with leading dimension N. Links -lcublas
// (expert_libs in task.toml).
//
// The handle is created on the first call (outside timing: the harness's
// correctness checks call every kernel first) and bound to the harness's
// stream on every call. Tensor-core math is allowed (fp16 inputs, fp32
// accumulation), and CUBLAS_GEMM_DEFAULT picks one algorithm per shape, so
// repeated calls are bit-identical.

#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace {

cublasHandle_t handle() {
  static cublasHandle_t h = nullptr;
  if (h == nullptr && cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
    h = nullptr;
  return h;
}

} // namespace

extern "C" int eat_kernel(const void* const* inputs, void* const* outputs,
                          const int64_t* axes, void* stream) {
  const int m = static_cast<int>(axes[0]);
  const int n = static_cast<int>(axes[1]);
  const int k = static_cast<int>(axes[2]);
  if (m == 0)
    return 0;
  cublasHandle_t h = handle();
  if (h == nullptr)
    return static_cast<int>(cudaErrorInitializationError);
  if (cublasSetStream(h, static_cast<cudaStream_t>(stream))
      != CUBLAS_STATUS_SUCCESS)
    return static_cast<int>(cudaErrorUnknown);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cublasStatus_t rc = cublasGemmEx(
      h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, inputs[1], CUDA_R_16F, k,
      inputs[0], CUDA_R_16F, k, &beta, outputs[0], CUDA_R_16F, n,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (rc != CUBLAS_STATUS_SUCCESS)
    return static_cast<int>(cudaErrorUnknown);
  return static_cast<int>(cudaGetLastError());
}
