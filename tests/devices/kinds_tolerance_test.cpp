// A task's tolerance (devices/kinds/tolerance.hpp): the matched ratio and the
// cap that BENCHMARK-PROTOCOL.md section 2 allows together, checked on their
// own and in whole evaluations on the CPU device.

#include <catch2/catch.hpp>

#include "devices/kinds/tolerance.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

TEST_CASE("a matched ratio allows the mismatches its complement counts, "
          "rounded down") {
  CHECK(tolerance{}.allowed_mismatches(1000000) == 0);
  CHECK(tolerance{0, 0, 0.99, 1}.allowed_mismatches(100) == 1);
  CHECK(tolerance{0, 0, 0.99, 1}.allowed_mismatches(199) == 1);
  CHECK(tolerance{0, 0, 0.99, 1}.allowed_mismatches(200) == 2);
  // 1 - 0.999 is a hair below 0.001 in binary.
  CHECK(tolerance{0, 0, 0.999, 1}.allowed_mismatches(1000) == 1);
  CHECK(tolerance{0, 0, 0.9, 1}.allowed_mismatches(5) == 0);
}

TEST_CASE("between two outputs that each meet a tolerance, errors double and "
          "both outputs' mismatches are allowed") {
  auto t = tolerance{1e-3, 2e-3, 0.99, 0.5}.between_outputs();
  CHECK(t.atol == 2e-3);
  CHECK(t.rtol == 4e-3);
  CHECK(t.matched_ratio == Approx(0.98));
  CHECK(t.max_error == 1.0);
  auto every = tolerance{1e-4, 1e-4}.between_outputs();
  CHECK(every.matched_ratio == 1);
  CHECK(every.max_error == 0);
}

TEST_CASE("a matched ratio below 1 needs a maximum error") {
  CHECK(check_tolerance({1e-4, 1e-4}).empty());
  CHECK(check_tolerance({1e-4, 1e-4, 0.99, 0.5}).empty());
  CHECK(check_tolerance({1e-4, 1e-4, 1, 0.5}).empty());
  CHECK(check_tolerance({1e-4, 1e-4, 0.99, 0})
        == "matched_ratio 0.99 needs max_error (a cap on every element's "
           "error)");
  CHECK_THAT(check_tolerance({1e-4, 1e-4, 1.5, 1}),
    Catch::Contains("matched_ratio 1.5 must lie in (0, 1]"));
  CHECK_THAT(
    check_tolerance({1e-4, 1e-4, 0, 1}), Catch::Contains("must lie in (0, 1]"));
  CHECK_THAT(check_tolerance({-1, 1e-4}), Catch::Contains(">= 0"));
  CHECK_THAT(check_tolerance({1e-4, 1e-4, 0.9, -1}),
    Catch::Contains("max_error -1 must be a finite number >= 0"));
}

TEST_CASE("the ratio and the cap read as words after the formula") {
  CHECK(ratio_text({1e-4, 1e-4}).empty());
  CHECK(ratio_text({1e-4, 1e-4, 0.995, 0.5})
        == " on at least 99.5 % of the elements, every element within 0.5 of "
           "the reference");
  CHECK(ratio_text({1e-4, 1e-4, 1, 2})
        == ", every element within 2 of the reference");
}

TEST_CASE("a task's tolerance text adds that runs may differ where the task "
          "allows it") {
  task_spec t;
  t.atol = 1e-4;
  t.rtol = 1e-4;
  CHECK(task_tolerance_text(t).empty());
  t.deterministic = false;
  CHECK(task_tolerance_text(t)
        == "; runs may differ (e.g. atomics), each within tolerance");
}

TEST_CASE("an evaluation honours the task's matched ratio and maximum "
          "error") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  // Every workload's C has more than 100 elements: one may miss.
  auto task = sgemm_task();
  auto one_off = make_candidate("one_off", naive_kernel("", "c[0] += 0.01f;"));

  SECTION("without one, a single element outside the tolerance fails") {
    auto r = dev->evaluate(task, one_off, 1);
    CHECK(r.status == eval_status::incorrect);
    CHECK_THAT(r.detail, Catch::Contains("C[0][0]"));
  }
  SECTION("with 99 % and a cap, it passes, timed outputs included") {
    task.matched_ratio = 0.99;
    task.max_error = 0.05;
    auto r = dev->evaluate(task, one_off, 1);
    INFO(r.detail);
    CHECK(r.status == eval_status::passed);
  }
  SECTION("an element beyond the cap fails") {
    task.matched_ratio = 0.99;
    task.max_error = 0.005;
    auto r = dev->evaluate(task, one_off, 1);
    CHECK(r.status == eval_status::incorrect);
    CHECK_THAT(r.detail, Catch::Contains("> maximum error 0.005"));
  }
  SECTION("a row of misses is more than 1 % of the elements") {
    task.matched_ratio = 0.99;
    task.max_error = 0.05;
    auto row = make_candidate(
      "row_off", naive_kernel("", "for (int64_t j = 0; j < n; ++j) c[j] += "
                                  "0.01f;"));
    auto r = dev->evaluate(task, row, 1);
    CHECK(r.status == eval_status::incorrect);
    CHECK_THAT(r.detail, Catch::Contains("too few elements within tolerance"));
  }
  SECTION("a ratio without a cap is refused before anything runs") {
    task.matched_ratio = 0.99;
    auto r = dev->evaluate(task, one_off, 1);
    CHECK(r.status == eval_status::rejected);
    CHECK_THAT(r.detail, Catch::Contains("needs max_error"));
  }
}
