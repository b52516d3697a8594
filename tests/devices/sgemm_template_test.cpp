// The tiled sgemm template (kernels/sgemm/tiled.cpp.in) compiles and is
// correct for every loop order with tile sizes that are tiny, odd, larger
// than the matrix, and ordinary.

#include <catch2/catch.hpp>

#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

TEST_CASE("every loop order of the tiled template passes with chosen tile "
          "sizes") {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.timing.check_seeds = 1;
  opts.timing.min_samples = 1;
  opts.timing.warmup = 0;
  opts.timing.max_time_s = 0.05;
  auto dev = make_device(opts);
  auto task = sgemm_task({gemm_workload(37, 23, 29)});
  struct tiles {
    int m, n, k;
  };
  for (const char* order : {"ijk", "ikj", "jik", "jki", "kij", "kji"}) {
    for (auto t : {tiles{1, 1, 1}, tiles{5, 7, 3}, tiles{256, 64, 16}}) {
      auto source = tiled_source(order, t.m, t.n, t.k);
      auto result = dev->evaluate(task, make_candidate("t", source), 3);
      INFO(order << " " << t.m << "x" << t.n << "x" << t.k << ": "
                 << result.detail << result.build_log);
      CHECK(result.status == eval_status::passed);
    }
  }
}

TEST_CASE("the tiled template rejects an unknown loop order at compile time") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(
    sgemm_task(), make_candidate("t", tiled_source("ijj", 8, 8, 8)), 3);
  CHECK(result.status == eval_status::compile_error);
  CHECK(
    result.build_log.find("loop_order must be one of") != std::string::npos);
}
