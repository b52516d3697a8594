// The parent's side of the runner protocol: starts eat-runner in a fresh
// scratch directory, hands it its request on fd 3, collects the reply from
// fd 4 under a wall-clock deadline, kills the runner's process group, and
// turns whatever happened into a precise status (docs/harness.md, "How a
// runner can end").
//
// Called by the CPU device from its evaluating thread; one call per
// evaluation; the call returns only after the runner and everything it
// started are gone and its scratch directory is removed.

#pragma once

#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"
#include "devices/device.hpp"
#include "devices/options.hpp"
#include "devices/runner_protocol.hpp"
#include "devices/subprocess.hpp"

namespace eat::devices {

/// Where and how long to run.
struct runner_launch {
  /// Absolute path of the eat-runner executable.
  std::string runner_path;
  /// Directory that receives the per-evaluation scratch directories.
  std::string scratch_parent;
  /// Wall-clock deadline of the whole runner process.
  double timeout_s = 300;
  /// Environment entries set ("NAME=value") or removed ("NAME") in the
  /// runner's, over the parent's (a GPU runner's visible GPUs).
  std::vector<std::string> env;
};

/// How one runner process went.
struct runner_outcome {
  /// The reply, when the runner exited with status 0 after writing a reply
  /// that decodes and carries the request's nonce.
  std::optional<runner_reply> reply;
  /// Otherwise, runtime_error or timeout, and what happened.
  eval_status status = eval_status::pending;
  std::string detail;
  /// Wall time of the runner process.
  double seconds = 0;
};

/// Runs `req` in a fresh runner. Errors are failures of the machinery
/// (cannot create the scratch directory or start the runner).
caf::expected<runner_outcome> run_runner(
  const runner_launch& launch, const runner_request& req);

/// What run_runner_bytes saw: the outcome, and the reply's bytes when the
/// outcome has a reply (a GPU runner's reply holds more than runner_reply).
struct runner_run {
  runner_outcome outcome;
  std::string reply_bytes;
};

/// Runs the runner on an encoded request whose nonce is `nonce`, in a
/// fresh scratch directory named `prefix` plus a random suffix; shared by
/// the CPU and GPU devices. Errors as run_runner's.
caf::expected<runner_run> run_runner_bytes(const runner_launch& launch,
  const std::string& request, uint64_t nonce, const std::string& prefix);

/// The request to evaluate `so` (compiled for `task`) with `seed`, shared
/// by the CPU and GPU devices: a fresh random nonce, the task's kind,
/// dtype, tolerances and workloads, the three objects, `timing`, the core
/// to pin the runner to, and a CPU-time limit one second past
/// `eval_timeout_s`. The caller sets the address-space limit.
runner_request make_runner_request(const task_spec& task, const prepared& so,
  uint64_t seed, const timing_options& timing, int core,
  double eval_timeout_s);

/// Maps how a runner ended to an outcome: `timed_out` if the deadline
/// passed, the exit status, the bytes read from fd 4, and the tails of its
/// stderr and stdout ("stderr: ...; stdout: ...", appended to failures).
/// Pure; exposed for tests.
runner_outcome interpret_runner_end(bool timed_out, double timeout_s,
  const exit_status& status, const std::string& reply_bytes, uint64_t nonce,
  const std::string& output_tails);

} // namespace eat::devices
