#include "devices/cpu_check.hpp"

#include <chrono>

#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"

namespace eat::devices {

namespace {

/// The naive sgemm of kernels/sgemm (C = A·B, row-major), baseline and
/// candidate alike, and its reference in double.
constexpr const char* naive_sgemm = R"(#include <cstdint>
extern "C" void eat_gemm(
  const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
}
)";

constexpr const char* reference_sgemm = R"(#include <cstdint>
extern "C" void eat_gemm_reference(
  const float* a, const float* b, double* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<double>(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = sum;
    }
}
)";

task_spec small_sgemm() {
  task_spec task;
  task.name = "devices-check-sgemm";
  task.kind = "gemm";
  task.dtype = "float32";
  task.atol = 1e-4;
  task.rtol = 1e-4;
  workload w;
  w.name = "m48_n40_k56";
  w.axes = {{"m", 48}, {"n", 40}, {"k", 56}};
  task.workloads = {w};
  task.reference_source = reference_sgemm;
  task.baseline_source = naive_sgemm;
  return task;
}

} // namespace

cpu_path_check check_cpu_path(cpu_options opts) {
  cpu_path_check check;
  opts.timing.warmup = 1;
  opts.timing.min_samples = 3;
  opts.timing.min_time_s = 0;
  opts.timing.max_time_s = 0.2;
  opts.timing.check_seeds = 1;
  auto start = std::chrono::steady_clock::now();
  auto dev = make_cpu_device("cpu-check", std::move(opts));
  if (!dev) {
    check.failure = render(dev.error());
    return check;
  }
  auto task = small_sgemm();
  candidate c;
  c.id = "devices-check";
  c.task = task.name;
  c.source = task.baseline_source;
  auto r = (*dev)->evaluate(task, c, 1);
  check.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  // The method line: "...; network ...; kernel code run as ...; speed-of-
  // light gate: ...".
  auto from = r.method.find("; network ");
  auto to = r.method.find("; speed-of-light gate", from);
  if (from != std::string::npos)
    check.sandbox = r.method.substr(from + 2, to - from - 2);
  check.ok = r.status == eval_status::passed;
  if (!check.ok)
    check.failure = to_string(r.status) + ": " + r.detail;
  return check;
}

} // namespace eat::devices
