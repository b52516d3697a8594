// The CUDA and HIP softmax tasks' kernels (kernels/softmax_cuda,
// kernels/softmax_hip), run on the CPU (tests/devices/cuda_on_cpu.hpp)
// through the CPU harness against the task's reference on small workloads:
// the baselines, instances of both template families, and kernels that
// must fail (no maximum subtracted, shuffles across two rows of a 64-lane
// wavefront).

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/agent/render.hpp"
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

namespace fs = std::filesystem;

namespace {

/// A workload line of the softmax definition.
std::string softmax_line(int rows, int cols) {
  return R"({"definition": "softmax", "workload": {"axes": {"rows": )"
         + std::to_string(rows) + R"(, "cols": )" + std::to_string(cols)
         + R"(}, "inputs": {"x": {"type": "random"}}}})";
}

/// The softmax task of the backend (HIP with `hip`) as a CPU task on small
/// workloads: its reference, tolerance and inputs in [80, 96), and its GPU
/// baseline run on the CPU as the baseline. 3 rows of 1000 (fewer floats
/// than a block of 1024 threads has lanes), 3 of 4099 (rows 1 and 2 start
/// 3 and 2 floats past a 16-byte boundary: scalar heads of 0, 1 and 2
/// floats, tails of 3, 2 and 1), 5 of 7 (shorter than a warp; blocks of 2, 4
/// and 8 rows end part-full).
task_spec softmax_on_cpu(bool hip, const fs::path& dir) {
  return test::gpu_task_on_cpu(hip ? "softmax_hip" : "softmax_cuda",
    {softmax_line(3, 1000), softmax_line(3, 4099), softmax_line(5, 7)}, dir,
    hip);
}

/// Each of `instances` of family `family` passes for CUDA and for HIP.
void check_softmax_family(
  const std::string& family, const std::vector<param_map>& instances) {
  auto dir = test::make_temp_dir();
  for (bool hip : {false, true}) {
    auto task = softmax_on_cpu(hip, dir.path());
    check_instances(task, family_of(task, family), instances, hip);
  }
}

} // namespace

TEST_CASE("the CUDA and HIP softmax baselines agree with the reference when "
          "run on the CPU (HIP with 64-lane wavefronts)") {
  auto dir = test::make_temp_dir();
  for (bool hip : {false, true})
    check_file_passes(softmax_on_cpu(hip, dir.path()),
      hip ? "kernels/softmax_hip/baseline.hip"
          : "kernels/softmax_cuda/baseline.cu",
      hip);
}

TEST_CASE("block_online instances of the CUDA and HIP softmax tasks agree "
          "with the reference when run on the CPU") {
  check_softmax_family("block_online",
    {{{"threads", "128"}, {"vec", "4"}}, {{"threads", "1024"}, {"vec", "1"}}});
}

TEST_CASE("warp_row instances of the CUDA and HIP softmax tasks agree with "
          "the reference when run on the CPU (HIP with two rows per "
          "64-lane wavefront)") {
  check_softmax_family(
    "warp_row", {{{"rows", "1"}, {"vec", "4"}}, {{"rows", "8"}, {"vec", "2"}}});
}

TEST_CASE("a softmax kernel that does not subtract the row maximum is "
          "incorrect, its exp overflowing on inputs from 80 to 96") {
  auto dir = test::make_temp_dir();
  auto task = softmax_on_cpu(false, dir.path());
  auto cu = test::edited(test::read_source("kernels/softmax_cuda/baseline.cu"),
    "expf(row[j] - max)", "expf(row[j])");
  auto r = evaluate_on_cpu(task, cu);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("output[") != std::string::npos);
}

TEST_CASE("a HIP softmax warp_row whose shuffles span the whole 64-lane "
          "wavefront merges two rows and fails on the CPU") {
  auto dir = test::make_temp_dir();
  auto task = softmax_on_cpu(true, dir.path());
  auto source = render_template(
    family_of(task, "warp_row"), {{"rows", "2"}, {"vec", "1"}});
  REQUIRE(source);
  // A merge written for the wavefront rather than for the row's team of
  // 32 lanes: offset 32 reaches the other team's row.
  auto wave = test::edited(
    test::edited(*source, "int offset = 16;", "int offset = 32;"),
    ", offset, 32)", ", offset)");
  auto r = evaluate_on_cpu(task, wave, true);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::incorrect);
  CHECK(r.detail.find("output[") != std::string::npos);
}
