#include "tests/devices/gpu_support.hpp"

#include <cstdio>
#include <cstring>

#include "devices/gpu_probe.hpp"

#include "tests/devices/test_support.hpp"

namespace eat::devices::test {

task_spec gpu_sgemm_task(
  const std::string& backend, std::vector<workload> workloads) {
  auto dir = "kernels/sgemm_" + backend + "/";
  task_spec task;
  task.name = "sgemm_" + backend;
  task.kind = "gemm";
  task.backend = backend;
  task.dtype = "float32";
  task.atol = 5e-4;
  task.rtol = 1e-4;
  task.workloads = std::move(workloads);
  // sgemm_hip names sgemm_cuda's reference.
  task.reference_source = read_source("kernels/sgemm_cuda/reference.cpp");
  task.baseline_source
    = read_source(dir + (backend == "cuda" ? "baseline.cu" : "baseline.hip"));
  return task;
}

std::string gpu_tiled_source(
  const std::string& backend, const std::vector<int>& params) {
  auto text = read_source("kernels/sgemm_" + backend + "/tiled."
                          + (backend == "cuda" ? "cu" : "hip") + ".in");
  const char* names[] = {
    "block_m", "block_n", "block_k", "thread_m", "thread_n", "unroll"};
  for (size_t i = 0; i < 6; ++i) {
    auto placeholder = std::string{"{{"} + names[i] + "}}";
    auto value = std::to_string(params.at(i));
    for (auto pos = text.find(placeholder); pos != std::string::npos;
         pos = text.find(placeholder, pos + value.size()))
      text.replace(pos, placeholder.size(), value);
  }
  return text;
}

std::string cuda_gemm_kernel(const std::string& body) {
  return R"(#include <cstdint>
#include <cuda_runtime.h>
__global__ void g(const float* a, const float* b, float* c, int64_t m,
                  int64_t n, int64_t k) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (i >= m || j >= n) return;
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
)" + body + R"(
}
extern "C" int eat_gemm(const float* a, const float* b, float* c, int64_t m,
                        int64_t n, int64_t k, void* stream) {
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (m + 15) / 16);
  g<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a, b, c, m, n, k);
  return static_cast<int>(cudaGetLastError());
}
)";
}

gpu_options quick_gpu_options(
  const std::string& backend, const scratch_dir& work_dir) {
  gpu_options opts;
  opts.runner_path
    = backend == "cuda" ? EAT_CUDA_RUNNER_PATH : EAT_HIP_RUNNER_PATH;
  opts.work_dir = work_dir.path().string();
  opts.eval_timeout_s = 120;
  opts.timing.warmup = 2;
  opts.timing.min_samples = 5;
  opts.timing.min_time_s = 0.05;
  opts.timing.max_time_s = 1;
  opts.timing.check_seeds = 2;
  return opts;
}

bool skip_without_cuda_gpu(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0)
      return false;
  auto probe = probe_cuda();
  if (!probe.devices.empty())
    return false;
  std::printf("skipped: no CUDA GPU (%s)\n", probe.error.c_str());
  return true;
}

} // namespace eat::devices::test
