// The mini definition task of the GPU harness's tests on the CPU
// (tests/devices/gpu_definition_harness_test.cpp,
// gpu_definition_inputs_test.cpp): C = A·Bᵀ and an integer output, its
// fp64 reference, a host "GPU" kernel with places for a test's own code,
// and a fixture that compiles the three and builds a runner's request for
// the fake gpu_api (tests/devices/host_gpu_api.hpp).

#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "devices/compiler.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "tests/devices/host_gpu_api.hpp"
#include "tests/devices/test_support.hpp"

namespace eat::devices::test {

/// A small definition task: C = A·Bᵀ (float32, M×N) and rows[i] = i + 1
/// (int32, M), from A (M×K) and B (N×K).
inline workload mini_gemm(int64_t m, int64_t n, int64_t k) {
  workload w;
  w.name = "m" + std::to_string(m);
  w.axes = {{"M", m}, {"N", n}, {"K", k}};
  w.abi_axes = {m, n, k};
  tensor_arg a;
  a.name = "A";
  a.dtype = "float32";
  a.shape = {m, k};
  auto b = a;
  b.name = "B";
  b.shape = {n, k};
  w.inputs = {a, b};
  tensor_arg c;
  c.name = "C";
  c.dtype = "float32";
  c.shape = {m, n};
  c.atol = 1e-4;
  c.rtol = 1e-4;
  tensor_arg rows;
  rows.name = "rows";
  rows.dtype = "int32";
  rows.shape = {m};
  w.outputs = {c, rows};
  w.flops = 2.0 * static_cast<double>(m * n * k);
  w.bytes = 4.0 * static_cast<double>(m * k + n * k + m * n + m);
  return w;
}

inline constexpr const char* mini_reference = R"(#include <cstdint>
extern "C" void eat_kernel_reference(const void* const* in,
    double* const* out, const int64_t* axes) {
  const int64_t m = axes[0], n = axes[1], k = axes[2];
  const float* a = static_cast<const float*>(in[0]);
  const float* b = static_cast<const float*>(in[1]);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += static_cast<double>(a[i * k + p]) * b[j * k + p];
      out[0][i * n + j] = s;
    }
    out[1][i] = static_cast<double>(i + 1);
  }
}
)";

/// A host "GPU" kernel of the mini task with `body` after each element of C,
/// `row` writing each element of rows, and `tail` before returning `rc`.
inline std::string mini_kernel(const std::string& body = "",
  const std::string& tail = "", const std::string& rc = "0",
  const std::string& row = "rows[i] = static_cast<int32_t>(i + 1);") {
  return R"(#include <cmath>
#include <cstdint>
extern "C" int eat_kernel(const void* const* in, void* const* out,
    const int64_t* axes, void* stream) {
  const int64_t m = axes[0], n = axes[1], k = axes[2];
  const float* a = static_cast<const float*>(in[0]);
  const float* b = static_cast<const float*>(in[1]);
  float* c = static_cast<float*>(out[0]);
  int32_t* rows = static_cast<int32_t*>(out[1]);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += a[i * k + p] * b[j * k + p];
      c[i * n + j] = s;
)" + body + R"(
    }
    )" + row
         + R"(
  }
)" + tail + "\n  return "
         + rc + ";\n}\n";
}

struct fixture {
  scratch_dir dir = make_temp_dir();
  compiler gxx = make_compiler();
  host_gpu_api api;

  compiler make_compiler() {
    auto made = compiler::make("g++", (dir.path() / "cache").string(), 120);
    REQUIRE(made);
    return std::move(*made);
  }

  std::string build(const std::string& source, const std::string& file) {
    auto out = gxx.compile(source, {"-O1", "-std=c++17"}, file);
    REQUIRE(out);
    INFO(out->log);
    REQUIRE(out->ok);
    return out->so_path;
  }

  gpu_runner_request request(const std::string& kind,
    std::vector<workload> workloads, const std::string& reference,
    const std::string& baseline, const std::string& candidate) {
    gpu_runner_request req;
    req.kind = kind;
    req.dtype = "float32";
    req.atol = 1e-4;
    req.rtol = 1e-4;
    req.workloads = std::move(workloads);
    req.reference_so = build(reference, "reference.cpp");
    req.baseline_so = build(baseline, "baseline.cpp");
    req.candidate_so = build(candidate, "candidate.cpp");
    req.seed = 42;
    req.timing.warmup = 1;
    req.timing.min_samples = 3;
    req.timing.min_time_s = 0;
    req.timing.max_time_s = 0.1;
    req.timing.check_seeds = 2;
    req.backend = "fake";
    return req;
  }

  /// A request of the mini task's first workload (m5) alone.
  gpu_runner_request one_workload(
    const std::string& baseline, const std::string& candidate) {
    return request(
      "definition", {mini_gemm(5, 6, 7)}, mini_reference, baseline, candidate);
  }

  gpu_runner_reply run_mini(const std::string& candidate) {
    auto req = request("definition", {mini_gemm(5, 6, 7), mini_gemm(3, 17, 33)},
      mini_reference, mini_kernel(), candidate);
    return run_gpu_request(api, req);
  }
};

} // namespace eat::devices::test
