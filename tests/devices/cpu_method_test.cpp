// Specification of a CPU evaluation's method line (devices/cpu_method.hpp):
// what it says was taken off the samples and what was counted, from the
// timing options and the runner's reply, including the reasons a runner
// gives when it could not take off or count.

#include <string>

#include <catch2/catch.hpp>

#include "devices/cpu_method.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// A reply with two workloads' figures.
runner_reply two_workloads() {
  runner_reply r;
  r.workloads.resize(2);
  r.workloads[0].baseline_others_ns = 1'500'000;
  r.workloads[0].candidate_others_ns = 250'000;
  r.workloads[1].baseline_others_ns = 500'000;
  r.workloads[0].interrupts
    = {10, 4, 20'000'000, 1, 2'000'000, 0.0, 0, 7, 30'000'000};
  r.workloads[1].interrupts
    = {5, 2, 5'000'000, 0, 1'000'000, 0.0, 0, 3, 8'000'000};
  r.interrupt_sources = {36, 38};
  return r;
}

} // namespace

TEST_CASE("the method sums the time taken off and the interrupts counted "
          "over the workloads") {
  timing_options t;
  auto r = two_workloads();
  auto method = measurement_method(t, &r);
  CAPTURE(method);
  CHECK(contains(method, "taken off the sample: 2 ms of the baseline's "
                         "calls, 0.25 ms of the candidate's"));
  CHECK(contains(method, "device interrupts on the device's core (36, 38) "
                         "counted around both kernels' calls"));
  CHECK(contains(method, ": 6 in the baseline's calls (25 ms), 1 in the "
                         "candidate's (3 ms) over 15 rounds, 10 in all 38 ms "
                         "of timing"));
}

TEST_CASE("the method says why the runner could not take other tasks' time "
          "off or count the interrupts") {
  timing_options t;
  auto r = two_workloads();
  r.others_not_taken_off = "cannot open /proc/thread-self/schedstat: EACCES";
  r.interrupts_not_counted = "cannot list /sys/kernel/irq: ENOENT";
  auto method = measurement_method(t, &r);
  CAPTURE(method);
  CHECK(contains(method, "the time other tasks had the core not taken off "
                         "the samples (cannot open "
                         "/proc/thread-self/schedstat: EACCES)"));
  CHECK(contains(method, "interrupts on the device's core not counted "
                         "(cannot list /sys/kernel/irq: ENOENT)"));
  CHECK_FALSE(contains(method, "taken off the sample:"));
}

TEST_CASE("the method says when no device's interrupt goes to the core or "
          "other tasks' time was left in") {
  timing_options t;
  t.take_off_others = false;
  auto r = two_workloads();
  r.interrupt_sources.clear();
  auto method = measurement_method(t, &r);
  CAPTURE(method);
  CHECK(contains(method, "device interrupts on the device's core (none is "
                         "routed there)"));
  CHECK(contains(method, "the time other tasks had the core left in the "
                         "samples"));
}

TEST_CASE("the method gives the probe's cost and the interrupts' time taken "
          "off, or why it was left in") {
  timing_options t;
  auto r = two_workloads();
  SECTION("fewer than one call in two met an interrupt: no probe") {
    auto method = measurement_method(t, &r);
    CAPTURE(method);
    CHECK(contains(method, "10 in all 38 ms of timing; their time left in "
                           "the samples, where fewer than one call in two "
                           "met one"));
  }
  SECTION("probed in both workloads") {
    auto& a = r.workloads[0].interrupts;
    a.probe = 130;
    a.probe_ns = 30'000'000;
    a.cost_ns = 18'740;
    a.baseline_taken_ns = 100'000'000;
    a.candidate_taken_ns = 2'000'000;
    auto& b = r.workloads[1].interrupts;
    b.probe = 66;
    b.probe_ns = 10'000'000;
    b.cost_ns = 21'260;
    b.baseline_taken_ns = 20'000'000;
    auto method = measurement_method(t, &r);
    CAPTURE(method);
    CHECK(contains(method,
      "their time taken off each watched call at the cost a probe spinning "
      "on the core measured (18.7 - 21.3 us an interrupt, by workload; 196 "
      "interrupts in 40 ms of probe), the candidate's calls at most 1.5 "
      "times the baseline's rate of them: 120 ms of the baseline's calls, 2 "
      "ms of the candidate's"));
    // One workload's cost, and a probe that saw no cost.
    b = {};
    CHECK(contains(measurement_method(t, &r), "(18.7 us an interrupt; 130 "
                                              "interrupts in 30 ms of probe)"));
    a.cost_ns = 0;
    CHECK(contains(measurement_method(t, &r), "(no cost seen; 130 "));
  }
  SECTION("taking off turned off") {
    t.take_off_interrupts = false;
    CHECK(contains(measurement_method(t, &r),
      "10 in all 38 ms of timing; their time left in the samples; "));
  }
}

TEST_CASE("the method says how many interrupts came from ones routed to the "
          "core during a timing and which workloads were timed again") {
  timing_options t;
  auto r = two_workloads();
  CHECK_FALSE(contains(measurement_method(t, &r), "routed to the core"));
  r.workloads[0].interrupts.unwatched = 3;
  r.workloads[1].interrupts.unwatched = 4;
  r.workloads[1].interrupts.retimed = 1;
  auto method = measurement_method(t, &r);
  CAPTURE(method);
  CHECK(contains(method,
    "10 in all 38 ms of timing, 7 more from interrupts routed to the core "
    "during a timing, counted around no call, 1 workload(s) timed again "
    "because interrupts were routed to the core during their timing; "
    "their time left in"));
}
