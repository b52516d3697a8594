// A check of the CPU device's whole path on this machine, for `eat devices
// --check` (docs/cli.md): a small sgemm compiled with the device's
// compiler and evaluated against itself through eat-runner, and what the
// runner's sandbox achieved here (docs/harness.md, "Sandbox"): network and
// PID namespaces, the cap on tasks, how hidden work is counted, whom
// kernel code ran as. Blocks for a few seconds; any thread.

#pragma once

#include <string>

#include "devices/options.hpp"

namespace eat::devices {

/// What check_cpu_path found.
struct cpu_path_check {
  /// Whether the sgemm passed.
  bool ok = false;
  /// Why not: the status and detail of the evaluation, or why no device
  /// could be made.
  std::string failure;
  /// The method line's words for the sandbox, from "network ..." to
  /// "... kernel code run as uid 65534".
  std::string sandbox;
  /// Wall time of making the device and of the evaluation, compiles
  /// included.
  double seconds = 0;
};

/// Makes a CPU device from `opts` (runner_path and work_dir set; quick
/// timing is used whatever opts.timing says) and evaluates a 48x40x56
/// naive sgemm against itself.
cpu_path_check check_cpu_path(cpu_options opts);

} // namespace eat::devices
