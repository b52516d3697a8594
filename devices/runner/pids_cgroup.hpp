// A cap on the number of tasks of one evaluation (docs/harness.md,
// "Sandbox"): the runner moves itself into a cgroup of its own in the pids
// controller's hierarchy, with `pids.max` set, before it forks the PID
// namespace's processes, so that every process and thread of the kernel
// counts against the cap. RLIMIT_NPROC does the same for an unprivileged
// user but is not enforced for root; the cgroup is, and it needs the
// privileges that root has (a writable cgroup file system).
//
// Works with cgroup v1's pids hierarchy and with cgroup v2 where the pids
// controller is enabled for the runner's cgroup's children. The cgroup is
// named eat-runner.<pid> beside the runner's own; the runner as started
// (the PID namespace's waiter) leaves and removes it when the evaluation
// ends, and each runner removes the empty cgroups of earlier runners that
// were killed before they could (a deadline's SIGKILL).

#pragma once

#include <cstdint>
#include <string>

namespace eat::devices {

/// Where the runner stands after enter_pids_cgroup().
struct pids_cgroup {
  /// The evaluation's cgroup directory; empty when none was made.
  std::string dir;
  /// The cgroup the runner came from (its cgroup.procs).
  std::string parent;
  /// Why there is no cap, when dir is empty (no pids controller, no
  /// permission, ...).
  std::string why_not;
};

/// Makes a cgroup with pids.max = max_tasks beside the calling process's
/// own, moves the process into it and removes stale cgroups of earlier
/// runners. Never fails the runner: without a cap, why_not says why.
pids_cgroup enter_pids_cgroup(uint64_t max_tasks);

/// Moves the calling process back to `cg.parent` and removes `cg.dir`,
/// waiting up to a second for its last tasks to be reaped. Returns an empty
/// string, or why the directory is left (the next runner removes it).
std::string leave_pids_cgroup(const pids_cgroup& cg);

} // namespace eat::devices
