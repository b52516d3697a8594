// A PID namespace for one evaluation (docs/harness.md, "Sandbox"): the
// runner's work moves into a new PID namespace, so that every process a
// kernel starts, even one that leaves the process group with setsid() and
// outlives its parent, is killed when the evaluation ends and can neither
// slow later evaluations nor see processes outside.
//
// Three processes: the runner as started (the waiter, in the parent's
// namespace), the namespace's init (PID 1, which only reaps), and the
// worker (PID 2), which returns from enter_pid_namespace() and does the
// evaluation. The worker's end ends init; init's end makes the kernel kill
// every other process of the namespace and wait for them; then the waiter
// ends as the worker did (the same exit status, or the same signal), so the
// device sees the worker's end. The worker is an ordinary process: the
// kernel's protection of a namespace's init from signals (SIGXCPU, a
// kernel's own raise(SIGABRT)) does not apply to it.
//
// Called by apply_sandbox, from the runner's only thread, after its fds
// are closed and before its rlimits are set.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "devices/runner/cgroups.hpp"

namespace eat::devices {

/// Where this process stands after enter_pid_namespace().
struct pid_namespace_result {
  /// Whether the caller now is the worker in a new PID namespace; false
  /// where unshare(CLONE_NEWPID) is not permitted (EPERM without
  /// privileges): the caller goes on in its own namespace.
  bool isolated = false;
  /// Empty unless the namespace was made but its processes could not be
  /// started (the runner stops).
  std::string error;
};

/// Moves the rest of the runner into a new PID namespace, returning in the
/// worker; the waiter and init never return from it. The waiter leaves
/// and removes `cgroups` (those with a directory) once init has ended.
pid_namespace_result enter_pid_namespace(
  const std::vector<runner_cgroup>& cgroups = {});

/// In the worker: the CPU time, in ns, of the processes the namespace's
/// init has reaped so far (a kernel's orphans, its helpers started with
/// CLONE_PARENT), which the worker's getrusage does not see. Init
/// publishes it after each reap in a page it shares with the worker (read
/// only there). 0 outside a namespace.
int64_t cpu_reaped_by_init_ns();

} // namespace eat::devices
