// Turns a runner's raw samples into the per-workload results and the overall
// verdict of an evaluation (BENCHMARK-PROTOCOL.md sections 3 and 5).
// Pure functions, parent side; usable from any thread.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"
#include "devices/cpu_peak.hpp"
#include "devices/kind.hpp"
#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// The verdict of an evaluation's run stage.
struct scored_run {
  eval_status status = eval_status::pending;
  std::string detail;
  std::vector<workload_result> workloads;
  /// Geometric mean of the workload speedups; 0 unless all passed.
  double geomean_speedup = 0;
};

/// Summarises one workload's samples: medians, spread, speedup and its
/// bootstrap interval (resampled with a generator seeded by `seed`).
workload_result score_workload(const workload_report& report, uint64_t seed);

/// Scores a reply to a request for `workloads`: one result per workload, in
/// task order; workloads the runner did not reach are listed as pending.
scored_run score_reply(const runner_reply& reply,
  const std::vector<workload>& workloads, uint64_t seed);

/// The speed-of-light gate (BENCHMARK-PROTOCOL.md section 4): a passed run
/// in which some workload's candidate median is below that workload's T_SOL
/// for `peak` becomes `rejected`, and so does that workload; its detail
/// names the workload and both times. Any other run is returned unchanged.
/// Each workload's sol_fraction is T_SOL × `slack` / candidate median:
/// `slack` is how many times the gate's peaks exceed the peaks the fraction
/// is reported against (cpu_peak_safety_factor on the CPU, whose gate
/// multiplies measured peaks; 1 on a GPU, whose gate is the datasheet's).
scored_run apply_speed_of_light(scored_run run, const kind& k,
  const std::vector<workload>& workloads, const cpu_peak& peak, double slack);

} // namespace eat::devices
