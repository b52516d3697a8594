// The sgemm task's blocked and packed template families and its OpenBLAS
// expert baseline (kernels/sgemm/), through the CPU device.

#include <catch2/catch.hpp>

#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

TEST_CASE("blocked and packed sgemm instances pass on sizes that fit no "
          "tile") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = sgemm_task({gemm_workload(37, 23, 29), gemm_workload(1, 1, 1),
    gemm_workload(70, 90, 300)});
  std::vector<std::string> sources{
    render_template("kernels/sgemm/blocked.cpp.in",
      {{"block_k", "16"}, {"block_n", "32"}, {"rows", "1"}}),
    render_template("kernels/sgemm/blocked.cpp.in",
      {{"block_k", "128"}, {"block_n", "256"}, {"rows", "4"}}),
    render_template("kernels/sgemm/packed.cpp.in",
      {{"mr", "1"}, {"nr", "16"}, {"kc", "64"}, {"mc", "16"}}),
    // Valid on every target: 2 + 1 + 2 * 2 registers of 32 with AVX-512,
    // 4 + 1 + 2 * 4 of 16 with AVX2.
    render_template("kernels/sgemm/packed.cpp.in",
      {{"mr", "2"}, {"nr", "32"}, {"kc", "256"}, {"mc", "128"}}),
    render_template("kernels/sgemm/packed.cpp.in",
      {{"mr", "6"}, {"nr", "16"}, {"kc", "64"}, {"mc", "16"}}),
  };
  for (const auto& src : sources) {
    auto r = dev->evaluate(task, make_candidate("t", src), 4);
    INFO(src.substr(0, 200) << "\n" << r.detail << r.build_log);
    CHECK(r.status == eval_status::passed);
  }
}

TEST_CASE("a packed micro-tile that needs more registers than the CPU has "
          "is a clear compile error") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto src = render_template("kernels/sgemm/packed.cpp.in",
    {{"mr", "14"}, {"nr", "64"}, {"kc", "64"}, {"mc", "64"}});
  auto r = dev->evaluate(sgemm_task(), make_candidate("t", src), 4);
  CHECK(r.status == eval_status::compile_error);
  CHECK(r.build_log.find("invalid combination:") != std::string::npos);
}

TEST_CASE("the OpenBLAS expert passes, linked only because the task names "
          "its libraries") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = sgemm_task({gemm_workload(37, 23, 29), gemm_workload(64, 64, 64)});
  task.expert_source = read_source("kernels/sgemm/expert.cpp");
  task.expert_libs = {"openblas"};
  auto r = dev->evaluate(task, make_candidate("expert", task.expert_source), 2);
  INFO(r.detail << r.build_log);
  CHECK(r.status == eval_status::passed);
  // The same source as an ordinary candidate of a task without the expert
  // gets no -lopenblas: cblas_sgemm stays unresolved when it is loaded.
  auto plain = sgemm_task({gemm_workload(8, 8, 8)});
  auto p = dev->evaluate(plain, make_candidate("c", task.expert_source), 2);
  CHECK(p.status != eval_status::passed);
}
