// The method line of a CPU evaluation (BENCHMARK-PROTOCOL.md section 5):
// how it was timed, what was taken off the samples, what was counted and
// how the runner was sandboxed, from the timing options and the runner's
// reply. Plain values; any thread.

#pragma once

#include <string>

#include "devices/options.hpp"
#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// `x` as printf's %g writes it.
std::string short_number(double x);

/// How a CPU evaluation is measured; `reply` (null if the runner gave
/// none) says how it was sandboxed and what was counted.
std::string measurement_method(
  const timing_options& t, const runner_reply* reply);

} // namespace eat::devices
