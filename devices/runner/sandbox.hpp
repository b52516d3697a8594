// The runners' sandbox: what eat-runner, eat-cuda-runner and eat-hip-runner
// do to themselves after reading the request and before loading any kernel
// code or touching a GPU (docs/harness.md, "Sandbox"). Its own process
// group, resource limits, no new privileges, death with its parent, a
// private network namespace, a PID namespace and cgroups of its own (a cap
// on tasks, the CPU time of all of them) where permitted (a runner that is
// not root first makes a user namespace for the first two), one pinned
// core, and for a runner started by root, an unprivileged user for the kernel
// (a GPU runner switches once its runtime has opened the GPU, which the
// user may not be allowed to open: switch_kernel_user). The GPU runners go
// without RLIMIT_AS, which the GPU runtimes cannot live with
// (they reserve hundreds of GiB of virtual address space for unified
// addressing; device memory is bounded by the GPU and owned by the
// harness), and disable the CUDA JIT cache (CUDA_CACHE_DISABLE=1) so that
// a kernel never writes outside the scratch directory.
//
// Called once, from the runner's main thread, while it is the only thread.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// What apply_sandbox achieved.
struct sandbox_report {
  /// Empty on success; otherwise what could not be set (the runner stops).
  std::string error;
  /// Whether the runner, not root, made a user namespace of its own
  /// (devices/runner/user_namespace.hpp) for the namespaces below.
  bool user_namespace = false;
  /// Whether unshare(CLONE_NEWNET) worked (it needs privileges).
  bool network_isolated = false;
  /// Whether the rest of the runner runs in a PID namespace of its own
  /// (devices/runner/pid_namespace.hpp; it needs privileges too).
  bool pid_isolated = false;
  /// Without the PID namespace: whether the runner adopts its kernels'
  /// orphans (devices/runner/orphans.hpp), to kill them before it replies.
  bool orphans_adopted = false;
  /// Whether the runner's tasks are capped by a pids cgroup of its own
  /// (devices/runner/cgroups.hpp; root can make one, and only that
  /// caps root, which RLIMIT_NPROC does not).
  bool tasks_capped = false;
  /// Whether the hidden-work check reads the CPU time of a cgroup of the
  /// evaluation's own (devices/runner/cgroups.hpp), which counts every
  /// process of the kernel, rather than getrusage.
  bool cgroup_cpu_time = false;
  /// The core the process is pinned to.
  int32_t core = -1;
  /// The real user id kernel code runs as (devices/runner/drop_root.hpp).
  int64_t kernel_uid = -1;
};

/// Which runner is sandboxed: the CPU runner gets every limit, a GPU runner
/// no address-space limit and no CUDA JIT cache.
enum class sandboxed { cpu_runner, gpu_runner };

/// Applies `limits` and pins the calling process to `core`. Where a PID
/// namespace can be made, it returns in a new process, the namespace's
/// worker (devices/runner/pid_namespace.hpp). A root CPU runner whose
/// limits name a user to run as switches to it (devices/runner/
/// drop_root.hpp), rewriting the paths in `code`, the shared objects it
/// loads afterwards; a GPU runner calls switch_kernel_user for that.
sandbox_report apply_sandbox(const runner_limits& limits, int32_t core,
  sandboxed who = sandboxed::cpu_runner,
  const std::vector<std::string*>& code = {});

/// A GPU runner's switch to the user `limits` names, once its runtime has
/// opened the GPU (whose device files that user may not be allowed to
/// open) and before it loads kernel code: drop_root with `code`, then
/// RLIMIT_NPROC set again from that user's task count. Nothing when the
/// limits name no user or the process is not root. Returns why it failed,
/// or an empty string.
std::string switch_kernel_user(
  const runner_limits& limits, const std::vector<std::string*>& code);

/// Returns the number of tasks (threads) of processes whose real user id
/// is this process's, as RLIMIT_NPROC counts them.
uint64_t user_task_count();

} // namespace eat::devices
