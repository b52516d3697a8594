#include "tests/devices/gpu_support.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
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

std::string cuda_gemm_kernel_from_thread(const std::string& body) {
  auto source = "#include <thread>\n" + cuda_gemm_kernel(body);
  auto at = source.find("g<<<");
  auto end = source.find(";", source.find(">>>", at));
  REQUIRE(end != std::string::npos);
  source.insert(end + 1, " }}.join();");
  source.insert(at, "std::thread{[&] { ");
  return source;
}

std::string built_runner(const std::string& backend) {
  return backend == "cuda" ? EAT_CUDA_RUNNER_PATH : EAT_HIP_RUNNER_PATH;
}

gpu_probe_result probe_built(const std::string& backend) {
  return probe_gpus(backend, built_runner(backend));
}

gpu_options quick_gpu_options(
  const std::string& backend, const scratch_dir& work_dir) {
  gpu_options opts;
  opts.runner_path = built_runner(backend);
  opts.work_dir = work_dir.path().string();
  opts.eval_timeout_s = 120;
  opts.timing.warmup = 2;
  opts.timing.min_samples = 5;
  opts.timing.min_time_s = 0.05;
  opts.timing.max_time_s = 1;
  opts.timing.check_seeds = 2;
  return opts;
}

namespace {

/// Evaluates `task`'s baseline in a child, as `uid` when root, on a device
/// of `gpu` with `opts` in a fresh work directory of that user's, with
/// user_namespace = `allowed`; returns its method line, or "error: ..." or
/// "skip: ..." (the runner out of the user's reach). Nothing may throw out
/// of the child.
std::string baseline_method_as(uid_t uid, bool allowed, const gpu_info& gpu,
  gpu_options opts, const task_spec& task) {
  return in_child([&]() -> std::string {
    try {
      if (!become_user(uid))
        return "error: cannot switch users";
      for (const auto& program : {opts.runner_path, opts.compiler})
        if (program.find('/') != std::string::npos
            && ::access(program.c_str(), X_OK) != 0)
          return "skip: " + program + " is out of reach of uid "
                 + std::to_string(uid);
      auto dir = scratch_dir::make(
        std::filesystem::temp_directory_path(), "eat-devices-test.");
      if (!dir)
        return "error: " + render(dir.error());
      opts.work_dir = dir->path().string();
      opts.user_namespace = allowed;
      auto made = make_gpu_device_for(
        gpu.backend + "0", gpu, "as another user", std::move(opts));
      if (!made)
        return "error: " + render(made.error());
      auto r = (*made)->evaluate(
        task, make_candidate("c", task.baseline_source), 11);
      if (r.status != eval_status::passed)
        return "error: " + r.detail + r.build_log;
      return r.method;
    } catch (...) {
      return "error: an exception";
    }
  });
}

} // namespace

void check_user_namespace_isolation(
  const gpu_info& gpu, const gpu_options& opts, const task_spec& task) {
  auto uid = ::geteuid() == 0 ? unused_uid(54'400) : ::geteuid();
  auto in_namespace = baseline_method_as(uid, true, gpu, opts, task);
  // For scripts/gpu-check.sh's figures: what the runner achieved, or why
  // the case could not run.
  auto from = in_namespace.find("; network ");
  std::printf("user namespace check (%s, uid %u): %s\n", gpu.name.c_str(),
    static_cast<unsigned>(uid),
    from == std::string::npos ? in_namespace.c_str()
                              : in_namespace.c_str() + from + 2);
  if (in_namespace.rfind("skip: ", 0) == 0) {
    WARN(in_namespace);
    return;
  }
  INFO(in_namespace);
  REQUIRE(in_namespace.rfind("error: ", 0) != 0);
  CHECK_THAT(in_namespace,
    Catch::Contains("; kernel code run as uid " + std::to_string(uid)));
  if (!user_namespaces_allowed(uid)) {
    WARN("no user namespace for an unprivileged process here");
    CHECK_THAT(in_namespace, Catch::Contains("; network not isolated"));
    return;
  }
  CHECK_THAT(in_namespace,
    Catch::Contains("; network isolated; kernel processes in their own PID "
                    "namespace; "));
  auto without = baseline_method_as(uid, false, gpu, opts, task);
  INFO(without);
  CHECK_THAT(
    without, Catch::Contains("; network not isolated; kernel processes in the "
                             "host's PID namespace; "));
}

bool skip_without_cuda_gpu(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0)
      return false;
  auto probe = probe_built("cuda");
  if (!probe.devices.empty())
    return false;
  std::printf("skipped: no CUDA GPU (%s)\n", probe.error.c_str());
  return true;
}

} // namespace eat::devices::test
