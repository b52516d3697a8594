// The CUDA and HIP rmsnorm tasks' kernels (kernels/rmsnorm_h4096_cuda,
// kernels/rmsnorm_h4096_hip), run on the CPU (tests/devices/cuda_on_cpu.hpp)
// through the CPU harness against the task's reference on small workloads:
// the reference on a hand-checked example, the baselines, instances of both
// template families, and kernels that must fail (the sum of squares not
// divided by the row's length, team sums that stop at 16 lanes).

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
#include "runtime/task_file.hpp"
#include "tests/devices/cuda_on_cpu.hpp"
#include "tests/devices/on_cpu_checks.hpp"
#include "tests/devices/small_tasks.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using test::check_file_passes;
using test::check_instances;
using test::evaluate_on_cpu;
using test::family_of;
using test::rmsnorm_line;

namespace fs = std::filesystem;

namespace {

/// The rmsnorm task of the backend (HIP with `hip`) as a CPU task on 1 row
/// and on 3 (blocks of 2, 4 and 16 rows end part-full; on HIP a wavefront
/// then holds one live team of 32 lanes and one that has left): its
/// reference, tolerance and generators, and its GPU baseline run on the
/// CPU as the baseline.
task_spec rmsnorm_on_cpu(bool hip, const fs::path& dir) {
  return test::gpu_task_on_cpu(hip ? "rmsnorm_h4096_hip" : "rmsnorm_h4096_cuda",
    {rmsnorm_line(1), rmsnorm_line(3)}, dir, hip);
}

/// Each of `instances` of family `family` passes for CUDA and for HIP.
void check_rmsnorm_family(
  const std::string& family, const std::vector<param_map>& instances) {
  auto dir = test::make_temp_dir();
  for (bool hip : {false, true}) {
    auto task = rmsnorm_on_cpu(hip, dir.path());
    check_instances(task, family_of(task, family), instances, hip);
  }
}

} // namespace

TEST_CASE("the rmsnorm_h4096 reference divides each row by its root mean "
          "square plus 1e-5 and scales it by the weight, from bf16 inputs") {
  auto cuda
    = load_task(fs::path{EAT_SOURCE_DIR} / "kernels", "rmsnorm_h4096_cuda");
  auto hip
    = load_task(fs::path{EAT_SOURCE_DIR} / "kernels", "rmsnorm_h4096_hip");
  REQUIRE(cuda);
  REQUIRE(hip);
  CHECK(hip->reference_source == cuda->reference_source);
  test::loaded_library library{cuda->reference_source};
  using entry = void (*)(const void* const*, double* const*, const int64_t*);
  auto reference
    = reinterpret_cast<entry>(library.symbol("eat_kernel_reference"));
  // Rows of 4 (the reference takes hidden_size from the axes), as bf16
  // bits: 1, 2, 3, 4 (mean square 7.5); -0.5, 0.5, -0.5, 0.5 (0.25); and
  // zeros, which 1e-5 keeps finite. The weight is 1, 0.5, -2, 0.
  const std::vector<uint16_t> x = {0x3f80, 0x4000, 0x4040, 0x4080, 0xbf00,
    0x3f00, 0xbf00, 0x3f00, 0x0000, 0x0000, 0x0000, 0x0000};
  const std::vector<uint16_t> w = {0x3f80, 0x3f00, 0xc000, 0x0000};
  std::vector<double> out(12, -1.0);
  const void* in[] = {x.data(), w.data()};
  double* outs[] = {out.data()};
  const int64_t axes[] = {3, 4};
  reference(in, outs, axes);
  const double a = 1 / std::sqrt(7.5 + 1e-5);
  const double b = 1 / std::sqrt(0.25 + 1e-5);
  const std::vector<double> expected
    = {a, a, -6 * a, 0, -0.5 * b, 0.25 * b, b, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("output element " << i);
    CHECK(out[i] == Approx(expected[i]).epsilon(1e-14).margin(1e-14));
  }
}

TEST_CASE("the CUDA and HIP rmsnorm baselines agree with the reference when "
          "run on the CPU (HIP with 64-lane wavefronts)") {
  auto dir = test::make_temp_dir();
  for (bool hip : {false, true})
    check_file_passes(rmsnorm_on_cpu(hip, dir.path()),
      hip ? "kernels/rmsnorm_h4096_hip/baseline.hip"
          : "kernels/rmsnorm_h4096_cuda/baseline.cu",
      hip);
}

TEST_CASE("block_row instances of the CUDA and HIP rmsnorm tasks agree with "
          "the reference when run on the CPU") {
  // The default instance (16 loads of 2 elements a thread) and the
  // fewest loads (one of 4 elements a thread, 32 warps).
  check_rmsnorm_family("block_row",
    {{{"threads", "128"}, {"vec", "2"}}, {{"threads", "1024"}, {"vec", "4"}}});
}

TEST_CASE("warp_row instances of the CUDA and HIP rmsnorm tasks agree with "
          "the reference when run on the CPU (HIP with two rows per 64-lane "
          "wavefront)") {
  // 16-byte loads with the row in registers, 2 rows a block (the second
  // block of the 3-row batch has one live row: on HIP half a wavefront);
  // and 4-byte loads read again, 16 rows a block, 3 of them live.
  check_rmsnorm_family(
    "warp_row", {{{"rows", "2"}, {"vec", "8"}, {"keep", "registers"}},
                  {{"rows", "16"}, {"vec", "2"}, {"keep", "reload"}}});
}

TEST_CASE("an rmsnorm kernel that takes the sum of squares for their "
          "mean is incorrect") {
  auto dir = test::make_temp_dir();
  auto task = rmsnorm_on_cpu(false, dir.path());
  // The sum instead of the mean: outputs 64 times too small.
  auto cu
    = test::edited(test::read_source("kernels/rmsnorm_h4096_cuda/baseline.cu"),
      "partial[0] / static_cast<float>(hidden)", "partial[0]");
  auto r = evaluate_on_cpu(task, cu);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("output[") != std::string::npos);
}

TEST_CASE("a HIP rmsnorm block_row whose team sums stop at 16 lanes misses "
          "half of each row and fails on the CPU") {
  auto dir = test::make_temp_dir();
  auto task = rmsnorm_on_cpu(true, dir.path());
  auto source = render_template(
    family_of(task, "block_row"), {{"threads", "256"}, {"vec", "8"}});
  REQUIRE(source);
  // A butterfly that starts one step late: lane 0 holds the sum of lanes
  // 0 to 15 only, and the shared array gets half of each team.
  auto short_sum = test::edited(*source, "int offset = 16;", "int offset = 8;");
  auto r = evaluate_on_cpu(task, short_sum, true);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("output[") != std::string::npos);
}
