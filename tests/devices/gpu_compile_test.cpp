// The GPU tasks' sources compile for the architectures CI cares about with
// no GPU present: the baseline and a tiled template instance of sgemm_cuda
// with nvcc for sm_90, of sgemm_hip with hipcc for gfx90a, through the same
// toolchain (and cache) the devices use. Each backend's case runs when its
// toolkit was found at configure time.

#include <catch2/catch.hpp>

#include <filesystem>

#include "actors/protocol/error.hpp"
#include "devices/gpu_resources.hpp"
#include "devices/gpu_toolchain.hpp"
#include "devices/subprocess.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// True if the shared object at `path` exports `symbol` (nm -D).
bool exports(const std::string& path, const std::string& symbol) {
  auto run = run_captured({"nm", "-D", "--defined-only", path}, "", 60);
  return run && run->status.exited && run->status.code == 0
         && run->output.find(" T " + symbol) != std::string::npos;
}

void check_compiles(const std::string& backend, const std::string& program,
  const std::string& arch) {
  auto dir = make_temp_dir();
  auto tools = gpu_toolchain::make(
    backend, program, "g++", {"-O3"}, dir.path().string(), 300);
  REQUIRE(tools);
  CHECK_THAT(tools->identity(), Catch::Contains(backend == "cuda" ? "release"
                                                                  : "HIP"));
  auto task = gpu_sgemm_task(backend, {gemm_workload(64, 64, 64)});
  auto tiled = make_candidate("t", gpu_tiled_source(backend, {64, 64, 8, 4, 4, 2}));
  auto out = tools->prepare(task, tiled, arch);
  INFO(out.detail << out.build_log);
  REQUIRE(out.status == eval_status::passed);
  CHECK(exports(out.baseline_object, "eat_gemm"));
  CHECK(exports(out.candidate_object, "eat_gemm"));
  CHECK(exports(out.reference_object, "eat_gemm_reference"));
  // The compiler's report of each kernel's registers and shared memory is in
  // the candidate's build log (BENCHMARK-PROTOCOL.md, section 1).
  auto resources = kernel_resources(out.build_log);
  INFO(out.build_log);
  REQUIRE_FALSE(resources.empty());
  CHECK_THAT(resources[0],
    Catch::Contains(backend == "cuda" ? " registers, " : " VGPRs, "));
  // Cached the second time: same objects, no new compile.
  auto again = tools->prepare(task, tiled, arch);
  CHECK(again.candidate_object == out.candidate_object);
  SECTION("a template instance with too many threads is the template's "
          "clear rejection, an invalid combination") {
    auto big = make_candidate("b", gpu_tiled_source(backend, {128, 128, 8, 1, 1, 1}));
    auto bad = tools->prepare(task, big, arch);
    CHECK(bad.status == eval_status::compile_error);
    CHECK_THAT(bad.build_log,
      Catch::Contains("invalid combination: a block must have between 32 "
                      "and 1024 threads"));
  }
  SECTION("a broken task baseline rejects the task, not the candidate") {
    task.baseline_source = "this is not CUDA";
    auto bad = tools->prepare(task, tiled, arch);
    CHECK(bad.status == eval_status::rejected);
    CHECK_THAT(bad.detail, Catch::Contains("baseline does not compile"));
  }
}

} // namespace

#if EAT_TEST_HAVE_CUDA
TEST_CASE("sgemm_cuda's baseline and tiled template compile with nvcc for "
          "sm_90") {
  check_compiles("cuda", EAT_TEST_NVCC, "sm_90");
}
#endif

#if EAT_TEST_HAVE_HIP
TEST_CASE("sgemm_hip's baseline and tiled template compile with hipcc for "
          "gfx90a") {
  check_compiles("hip", EAT_TEST_HIPCC, "gfx90a");
}
#endif

TEST_CASE("a missing GPU compiler makes no toolchain") {
  auto dir = make_temp_dir();
  auto tools = gpu_toolchain::make("cuda", "/nonexistent/nvcc", "g++", {},
    dir.path().string(), 10);
  REQUIRE_FALSE(tools);
  CHECK_THAT(render(tools.error()), Catch::Contains("/nonexistent/nvcc"));
}
