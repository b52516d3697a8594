// The cgroups of one evaluation (docs/harness.md, "Sandbox"). The runner
// moves itself into them before it forks the PID namespace's processes, so
// that every process and thread of the kernel belongs to them too:
//
// - a pids cgroup, with `pids.max` set: a cap on the evaluation's tasks.
//   RLIMIT_NPROC does the same for an unprivileged user but is not
//   enforced for root; the cgroup is. Cgroup v1's pids hierarchy, or
//   cgroup v2 where the pids controller is enabled for the children of the
//   runner's cgroup.
// - a CPU-time cgroup: the CPU time of every task of the evaluation, gone
//   or alive, whoever reaped it, for the hidden-work check
//   (devices/runner/checks.hpp). Cgroup v1's cpuacct hierarchy
//   (`cpuacct.usage`, ns), or cgroup v2, where every cgroup has
//   `cpu.stat` (`usage_usec`) whether or not the cpu controller is
//   enabled; under v2 it is the pids cgroup itself when there is one.
//
// Making them needs the privileges that root has (a writable cgroup file
// system). Each is named eat-runner.<pid> beside the runner's own cgroup in
// its hierarchy; the runner as started (the PID namespace's waiter) leaves
// and removes them when the evaluation ends, and each runner removes the
// empty cgroups of earlier runners that were killed before they could (a
// deadline's SIGKILL).

#pragma once

#include <cstdint>
#include <string>

namespace eat::devices {

/// A cgroup the runner entered.
struct runner_cgroup {
  /// The evaluation's cgroup directory; empty when none was made.
  std::string dir;
  /// The cgroup the runner came from (its directory).
  std::string parent;
  /// Why there is none, when dir is empty (no such controller, no
  /// permission, ...).
  std::string why_not;
  /// Whether it is in cgroup v2's hierarchy.
  bool v2 = false;
};

/// Makes a cgroup with pids.max = max_tasks beside the calling process's
/// own, moves the process into it and removes stale cgroups of earlier
/// runners. Never fails the runner: without a cap, why_not says why.
runner_cgroup enter_pids_cgroup(uint64_t max_tasks);

/// Makes a cgroup whose CPU time covers the calling process and every
/// process it starts from now on, and moves the process into it; `pids`
/// is the pids cgroup already entered, returned as it is where it serves
/// (cgroup v2). Never fails the runner: without one, why_not says why.
runner_cgroup enter_cpu_cgroup(const runner_cgroup& pids);

/// The file of `cg` (a CPU-time cgroup) that other_cpu_now() reads
/// (devices/runner/checks.hpp).
std::string cpu_time_file(const runner_cgroup& cg);

/// Parses the CPU time in ns from the text of a CPU-time file: cgroup v1's
/// `cpuacct.usage` (a number of ns) or cgroup v2's `cpu.stat` (its
/// `usage_usec` line); -1 if the text has none.
int64_t parse_cgroup_cpu_ns(const std::string& text, bool v2);

/// Moves the calling process back to `cg.parent` and removes `cg.dir`,
/// waiting up to a second for its last tasks to be reaped. Returns an empty
/// string, or why the directory is left (the next runner removes it).
std::string leave_cgroup(const runner_cgroup& cg);

} // namespace eat::devices
