// The sim device: a timing model instead of hardware, for testing the runtime
// itself at scale (hundreds of teams, thousands of evaluations) without
// compiling or running kernels. Its results are complete eval_results whose
// speedups follow a deterministic landscape over the candidate's template
// parameters, with seeded noise. docs/harness.md ("The sim device").
//
// prepare() waits compile_s and run() waits run_s: real waits that model
// latency (tests use 0). prepare() is thread-safe; run() is called by one
// thread at a time, like every device's.

#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "devices/device.hpp"

namespace eat::devices {

/// How a sim device behaves.
struct sim_options {
  /// Latency of the compile stage, in seconds.
  double compile_s = 0;
  /// Latency of the timed stage, in seconds.
  double run_s = 0;
  /// Relative standard deviation of the timing noise; the noise factor is
  /// clamped to 1 +- 3 * noise.
  double noise = 0.01;
  /// Speedup of a candidate whose parameters all sit on the hidden optimum.
  double peak_speedup = 3;
  /// Start failing health checks after this many runs; 0 never fails.
  uint64_t fail_health_after = 0;
  /// Seed of the noise.
  uint64_t seed = 0;
};

/// Makes the sim device `id`.
std::unique_ptr<device> make_sim_device(std::string id, sim_options opts);

/// The noise-free speedup the sim landscape gives `c` on `task`: 1 for a
/// candidate without template parameters, up to `peak_speedup` when every
/// parameter sits on its hidden optimum (drawn from the task name's hash).
double sim_landscape(
  const task_spec& task, const candidate& c, double peak_speedup);

} // namespace eat::devices
