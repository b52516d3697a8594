// Specification of the stopping rule (devices/stopping_rule.hpp,
// BENCHMARK-PROTOCOL.md section 3): sampling stops at the time cap, or once
// enough samples and time are in and the standard error of the candidate's
// median is below the bound, which rare far samples (stalls of the machine)
// do not hold off as they hold off the mean's.

#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "devices/rng.hpp"
#include "devices/stats.hpp"
#include "devices/stopping_rule.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

timing_options rule_options() {
  timing_options t;
  t.min_samples = 10;
  t.min_time_s = 0.5;
  t.max_time_s = 10;
  t.max_rel_se = 0.01;
  return t;
}

/// Samples of 1 ms +- 10 %, every 25th stalled to 2.7 ms (as the process
/// switches after each of the VM's memory samplings: docs/harness.md).
int64_t stalled_sample(rng& gen, size_t i) {
  if (i % 25 == 24)
    return 2'700'000;
  return static_cast<int64_t>(1'000'000 * gen.uniform(0.9, 1.1));
}

} // namespace

TEST_CASE("sampling stops at the time cap whatever the samples say") {
  auto t = rule_options();
  stopping_rule rule{t};
  CHECK(rule.done(1'000'000, t.max_time_s));
}

TEST_CASE("sampling goes on until both the least samples and the least time "
          "are in") {
  auto t = rule_options();
  stopping_rule rule{t};
  // Identical samples: the median is exact from the second one on.
  for (uint32_t i = 1; i < t.min_samples; ++i)
    CHECK_FALSE(rule.done(1'000'000, 1.0));
  CHECK_FALSE(rule.done(1'000'000, 0.4));
  CHECK(rule.done(1'000'000, 0.6));
}

TEST_CASE("sampling stops once the median is known precisely enough, though "
          "a stall every 25 rounds keeps the mean's error above the bound") {
  auto t = rule_options();
  stopping_rule rule{t};
  rng gen{5};
  std::vector<double> seen;
  bool stopped = false;
  for (size_t i = 0; i < 1000 && !stopped; ++i) {
    auto x = stalled_sample(gen, i);
    seen.push_back(static_cast<double>(x));
    stopped = rule.done(x, 1.0);
  }
  CHECK(stopped);
  // About 1.25 x 5.8 % / sqrt(n) < 1 %: some 50 - 80 samples.
  CHECK(seen.size() < 200);
  // The stalls are among the samples the rule stopped on, and a rule on
  // the mean would have gone on.
  CHECK(*std::max_element(seen.begin(), seen.end()) == 2'700'000);
  CHECK(relative_standard_error(seen) > t.max_rel_se);
}

TEST_CASE("sampling goes on while the median is uncertain") {
  auto t = rule_options();
  stopping_rule rule{t};
  rng gen{6};
  // Uniform over 0.5 - 1.5 ms: the median's standard error is about
  // 0.5 / sqrt(n), 1 % only after ~2,500 samples.
  for (int i = 0; i < 1000; ++i)
    REQUIRE_FALSE(
      rule.done(static_cast<int64_t>(1'000'000 * gen.uniform(0.5, 1.5)), 1.0));
}

TEST_CASE("a candidate whose every 16th call stalls is timed until its "
          "median is known, not until the time cap") {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.timing.min_samples = 10;
  opts.timing.min_time_s = 0.1;
  opts.timing.max_time_s = 30;
  auto dev = make_device(opts);
  auto task = sgemm_task({gemm_workload(48, 48, 48)});
  auto stalls = naive_kernel(R"(static int calls = 0;
  int reps = ++calls % 16 == 0 ? 20 : 1;
  for (volatile int rep = 0; rep < reps; ++rep) {)",
    "}");
  auto result = dev->evaluate(task, make_candidate("c", stalls), 12);
  INFO(result.detail << "\n" << result.method);
  REQUIRE(result.status == eval_status::passed);
  REQUIRE(result.workloads.size() == 1);
  const auto& w = result.workloads[0];
  // The stalls were timed: a spread far above a steady kernel's few %.
  CHECK(w.candidate_cv > 0.5);
  // Sampling stopped soon after its 0.1 s (~850 rounds of ~0.12 ms on the
  // development VM), not at 30 s or 100,000 rounds: a rule on the mean
  // needs ~40,000 samples of such a spread ((2.1 / 1 %)^2).
  CHECK(w.samples < 10000);
}
