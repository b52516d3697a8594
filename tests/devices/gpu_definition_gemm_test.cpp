// Specification of the gemm_n4096_k4096 task through the GPU harness, on
// the CPU: its own definition, generators, fp64 reference and tolerances,
// with host functions of the GPU entry ABI standing in for kernels behind
// a host-memory gpu_api. A kernel that accumulates in float (what every
// shipped kernel does) passes; one that accumulates in fp16 fails, as the
// tolerance comment in task.toml says it must.

#include <catch2/catch.hpp>

#include <filesystem>

#include "actors/protocol/error.hpp"
#include "devices/compiler.hpp"
#include "devices/gpu_runner/gpu_harness.hpp"
#include "runtime/task_file.hpp"
#include "tests/devices/host_gpu_api.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// A host kernel of the task's ABI: C = A·Bᵀ with a `acc` accumulator
/// (GCC's _Float16 is IEEE binary16; `volatile` forces a rounding to it
/// at every step).
std::string host_gemm(const std::string& acc) {
  return R"(#include <cstdint>
extern "C" int eat_kernel(const void* const* in, void* const* out,
                          const int64_t* axes, void* stream) {
  const int64_t m = axes[0], n = axes[1], k = axes[2];
  const _Float16* a = static_cast<const _Float16*>(in[0]);
  const _Float16* b = static_cast<const _Float16*>(in[1]);
  _Float16* c = static_cast<_Float16*>(out[0]);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      )" + acc + R"( sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum = sum + static_cast<float>(a[i * k + p])
                    * static_cast<float>(b[j * k + p]);
      c[i * n + j] = static_cast<_Float16>(static_cast<float>(sum));
    }
  return 0;
}
)";
}

} // namespace

TEST_CASE("gemm_n4096_k4096 passes a float accumulator and fails an fp16 "
          "one through the GPU harness") {
  auto task = load_task(
    std::filesystem::path{EAT_SOURCE_DIR} / "kernels", "gemm_n4096_k4096");
  REQUIRE(task);
  auto dir = make_temp_dir();
  auto gxx = compiler::make("g++", (dir.path() / "cache").string(), 120);
  REQUIRE(gxx);
  auto build = [&](const std::string& source, const std::string& file) {
    auto out = gxx->compile(source, {"-O2", "-std=c++17"}, file);
    REQUIRE(out);
    INFO(out->log);
    REQUIRE(out->ok);
    return out->so_path;
  };
  gpu_runner_request req;
  req.kind = task->kind;
  req.dtype = task->dtype;
  for (const auto& w : task->workloads)
    if (w.abi_axes[0] == 7) // M = 7: not a multiple of any tile
      req.workloads.push_back(w);
  REQUIRE(req.workloads.size() == 1);
  req.reference_so = build(task->reference_source, "reference.cpp");
  req.baseline_so = build(host_gemm("float"), "baseline.cpp");
  req.seed = 17;
  req.timing.warmup = 1;
  req.timing.min_samples = 3;
  req.timing.min_time_s = 0;
  req.timing.max_time_s = 0.1;
  req.timing.check_seeds = 1;
  req.backend = "fake";
  host_gpu_api api;
  SECTION("float accumulation passes, with errors of fp16 rounding") {
    req.candidate_so = req.baseline_so;
    auto reply = run_gpu_request(api, req);
    INFO(reply.detail);
    REQUIRE(reply.status == eval_status::passed);
    REQUIRE(reply.workloads.size() == 1);
    // |C| ~ 21, at most ~80: fp16's half ulp is at most 2^-5 there.
    CHECK(reply.workloads[0].max_abs_error > 0);
    CHECK(reply.workloads[0].max_abs_error <= 0.04);
  }
  SECTION("fp16 accumulation fails") {
    req.candidate_so = build(host_gemm("volatile _Float16"), "candidate.cpp");
    auto reply = run_gpu_request(api, req);
    CHECK(reply.status == eval_status::incorrect);
    CHECK_THAT(reply.detail, Catch::Contains("C["));
  }
}
