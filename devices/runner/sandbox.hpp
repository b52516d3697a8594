// The runner's sandbox: what eat-runner does to itself after reading its
// request and before loading any kernel code (docs/harness.md, "Sandbox").
// Its own process group, resource limits, no new privileges, death with its
// parent, a private network namespace where permitted, and one pinned core.
//
// Called once, from the runner's main thread, while it is the only thread.

#pragma once

#include <cstdint>
#include <string>

#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// What apply_sandbox achieved.
struct sandbox_report {
  /// Empty on success; otherwise what could not be set (the runner stops).
  std::string error;
  /// Whether unshare(CLONE_NEWNET) worked (it needs privileges).
  bool network_isolated = false;
  /// The core the process is pinned to.
  int32_t core = -1;
};

/// Applies `limits` and pins the calling process to `core`.
sandbox_report apply_sandbox(const runner_limits& limits, int32_t core);

/// Returns the number of tasks (threads) owned by the real user id, as
/// RLIMIT_NPROC counts them.
uint64_t user_task_count();

} // namespace eat::devices
