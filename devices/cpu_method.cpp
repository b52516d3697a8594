#include "devices/cpu_method.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "devices/run_as.hpp"
#include "devices/runner/interrupts.hpp"

namespace eat::devices {

std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

namespace {

/// What the hidden-work check counted (docs/harness.md, "Checks after
/// timing").
const char* hidden_work_count(const runner_reply& r) {
  if (r.cgroup_cpu_time)
    return "over the evaluation's cgroup";
  if (r.pid_isolated)
    return "by getrusage and the namespace's init";
  return "by getrusage";
}

/// What was taken off the samples for other tasks on the core
/// (devices/runner/run_delay.hpp).
std::string others_text(const timing_options& t, const runner_reply& r) {
  if (!t.take_off_others)
    return "the time other tasks had the core left in the samples";
  if (!r.others_not_taken_off.empty())
    return "the time other tasks had the core not taken off the samples ("
           + r.others_not_taken_off + ")";
  int64_t baseline_ns = 0;
  int64_t candidate_ns = 0;
  for (const auto& w : r.workloads) {
    baseline_ns += w.baseline_others_ns;
    candidate_ns += w.candidate_others_ns;
  }
  return "the time other tasks had the core in a timed call (from the "
         "schedstat waits of the kernel's and the runner's threads, never "
         "more than the call's time less the kernel's CPU time) taken off "
         "the sample: "
         + short_number(static_cast<double>(baseline_ns) / 1e6)
         + " ms of the baseline's calls, "
         + short_number(static_cast<double>(candidate_ns) / 1e6)
         + " ms of the candidate's";
}

/// What was taken off the samples for the interrupts counted
/// (devices/runner/interrupt_cost.hpp).
std::string interrupts_taken_text(
  const timing_options& t, const runner_reply& r) {
  if (!t.take_off_interrupts)
    return "their time left in the samples";
  double least = 0;
  double most = 0;
  interrupt_tally sum;
  for (const auto& w : r.workloads) {
    const auto& i = w.interrupts;
    sum.probe += i.probe;
    sum.probe_ns += i.probe_ns;
    sum.baseline_taken_ns += i.baseline_taken_ns;
    sum.candidate_taken_ns += i.candidate_taken_ns;
    if (i.cost_ns <= 0)
      continue;
    least = least > 0 ? std::min(least, i.cost_ns) : i.cost_ns;
    most = std::max(most, i.cost_ns);
  }
  if (sum.probe_ns == 0)
    return "their time left in the samples, where fewer than one call in "
           "two met one";
  auto us = [](double ns) {
    return short_number(std::round(ns / 100) / 10);
  };
  auto cost = most <= 0       ? std::string{"no cost seen"}
              : least == most ? us(most) + " us an interrupt"
                              : us(least) + " - " + us(most)
                                  + " us an interrupt, by workload";
  auto ms = [](int64_t ns) {
    return short_number(static_cast<double>(ns) / 1e6) + " ms";
  };
  return "their time taken off each watched call at the cost a probe "
         "spinning on the core measured ("
         + cost + "; " + std::to_string(sum.probe) + " interrupts in "
         + ms(sum.probe_ns) + " of probe), the candidate's calls at most "
         + short_number(rate_margin) + " times the baseline's rate of them: "
         + ms(sum.baseline_taken_ns) + " of the baseline's calls, "
         + ms(sum.candidate_taken_ns) + " of the candidate's";
}

/// What came of interrupts routed to the device's core during a timing
/// (summed in `sum`): "" where none came.
std::string rerouted_text(const interrupt_tally& sum) {
  std::string text;
  if (sum.unwatched > 0)
    text += ", " + std::to_string(sum.unwatched)
            + " more from interrupts routed to the core during a timing, "
              "counted around no call";
  if (sum.retimed > 0)
    text += ", " + std::to_string(sum.retimed)
            + " workload(s) timed again because interrupts were routed to "
              "the core during their timing";
  return text;
}

/// What was counted of the interrupts on the device's core
/// (devices/runner/interrupts.hpp).
std::string interrupts_text(const timing_options& t, const runner_reply& r) {
  if (!r.interrupts_not_counted.empty())
    return "interrupts on the device's core not counted ("
           + r.interrupts_not_counted + ")";
  interrupt_tally sum;
  for (const auto& w : r.workloads) {
    sum.rounds += w.interrupts.rounds;
    sum.baseline += w.interrupts.baseline;
    sum.baseline_ns += w.interrupts.baseline_ns;
    sum.candidate += w.interrupts.candidate;
    sum.candidate_ns += w.interrupts.candidate_ns;
    sum.all += w.interrupts.all;
    sum.all_ns += w.interrupts.all_ns;
    sum.unwatched += w.interrupts.unwatched;
    sum.retimed += w.interrupts.retimed;
  }
  auto ms = [](int64_t ns) {
    return short_number(static_cast<double>(ns) / 1e6) + " ms";
  };
  std::string sources;
  for (auto n : r.interrupt_sources)
    sources += (sources.empty() ? "" : ", ") + std::to_string(n);
  if (sources.empty())
    sources = "none is routed there";
  return "device interrupts on the device's core (" + sources
         + ") counted around both kernels' calls in every round or a "
           "secret share, and rejected when the baseline's calls have far "
           "more than the candidate's rate allows: "
         + std::to_string(sum.baseline) + " in the baseline's calls ("
         + ms(sum.baseline_ns) + "), " + std::to_string(sum.candidate)
         + " in the candidate's (" + ms(sum.candidate_ns) + ") over "
         + std::to_string(sum.rounds) + " rounds, " + std::to_string(sum.all)
         + " in all " + ms(sum.all_ns) + " of timing" + rerouted_text(sum)
         + "; " + interrupts_taken_text(t, r);
}

} // namespace

/// How a CPU evaluation is measured (BENCHMARK-PROTOCOL.md section 5);
/// `reply` (null if the runner gave none) says how it was sandboxed.
std::string measurement_method(
  const timing_options& t, const runner_reply* reply) {
  runner_reply none;
  const auto& r = reply != nullptr ? *reply : none;
  int64_t overhead_ns = 0;
  for (const auto& w : r.workloads)
    overhead_ns = std::max(overhead_ns, w.call_overhead_ns);
  auto clock = r.kernel_processes
                 ? "cpu: baseline and candidate each in a process of its "
                   "own, steady_clock from posting each call to its end, "
                   "an empty call's median round trip (up to "
                     + short_number(static_cast<double>(overhead_ns) / 1e3)
                     + " us) taken off every sample, the candidate's "
                       "process's CPU time between its calls "
                     + std::to_string(r.candidate_idle_cpu_ns / 1000) + " us ("
                     + std::to_string(r.candidate_cpu_during_baseline_ns / 1000)
                     + " us while the baseline's ran)"
                 : std::string{"cpu: steady_clock around each call"};
  return clock + "; " + others_text(t, r) + "; " + interrupts_text(t, r)
         + "; baseline and candidate "
           "interleaved in random order; input sets rotated (> max(2x LLC, "
           "32 MiB), up to 128 MiB, inputs flushed from the caches where the "
           "sets fall short), floating inputs drawn anew at each pass; "
         + std::to_string(t.warmup)
         + " warm-up calls; stop at >= " + std::to_string(t.min_samples)
         + " samples, " + short_number(t.min_time_s)
         + " s and relative SE of the median < " + short_number(t.max_rel_se)
         + ", or after " + short_number(t.max_time_s)
         + " s; speedup of medians with a paired bootstrap 95% CI; "
         + isolation_note(r) + "; hidden work counted " + hidden_work_count(r)
         + "; " + kernel_user_note(r.kernel_uid);
}

} // namespace eat::devices
