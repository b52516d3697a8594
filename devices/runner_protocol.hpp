// The messages between the CPU device (parent) and eat-runner (child): one
// runner_request read from the child's fd 3, one runner_reply written to its
// fd 4, both MessagePack maps (EAT_DESCRIBE; docs/harness.md lists the
// fields). The seed travels only here, never in argv or the environment.
// Plain values; any thread.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/describe.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"
#include "devices/options.hpp"

namespace eat::devices {

EAT_DESCRIBE(timing_options, warmup, min_samples, min_time_s, max_time_s,
  max_rel_se, check_seeds, reference_samples, take_off_others,
  take_off_interrupts)

/// Child fd on which the runner reads its request.
constexpr int runner_request_fd = 3;

/// Child fd on which the runner writes its reply.
constexpr int runner_reply_fd = 4;

/// Resource limits the runner applies to itself before loading any kernel.
struct runner_limits {
  /// RLIMIT_AS, MiB.
  uint64_t address_space_mib = 4096;
  /// RLIMIT_CPU, seconds.
  uint64_t cpu_s = 300;
  /// RLIMIT_FSIZE, MiB.
  uint64_t file_size_mib = 64;
  /// RLIMIT_NPROC is set to the user's current task count plus this.
  uint64_t extra_tasks = 16;
  /// User and group ids kernel code runs as when the runner is root
  /// (devices/runner/drop_root.hpp); -1 keeps root.
  int64_t run_as_uid = -1;
  int64_t run_as_gid = -1;
  /// When the runner is not root: whether it makes a user namespace of its
  /// own for the network and PID namespaces (devices/runner/
  /// user_namespace.hpp). Off only for a GPU runtime that cannot work in
  /// one ([devices.cuda] and [devices.hip] user_namespace).
  bool user_namespace = true;
};

/// What the parent asks the runner to do.
struct runner_request {
  /// Random value the reply must echo: a reply that lacks it was not written
  /// by this runner's harness.
  uint64_t nonce = 0;
  /// Task kind, dtype and tolerances (task_spec fields). Definition tasks'
  /// workloads carry their tensors, generators and tolerances.
  std::string kind;
  std::string dtype;
  double atol = 0;
  double rtol = 0;
  double matched_ratio = 1;
  double max_error = 0;
  /// task_spec::deterministic: false checks a second run against the
  /// reference instead of bit for bit against the first.
  bool deterministic = true;
  std::vector<workload> workloads;
  /// Absolute paths of the compiled shared objects.
  std::string reference_so;
  std::string baseline_so;
  std::string candidate_so;
  /// Secret seed of the input sets.
  uint64_t seed = 0;
  timing_options timing;
  /// CPU to pin to (already resolved; never -1).
  int32_t core = 0;
  runner_limits limits;
  /// Run the baseline and the candidate each in a process of its own,
  /// which shares only their buffers with the runner
  /// (devices/runner/kernel_host.hpp; `[devices.cpu] kernel_processes`).
  bool kernel_processes = false;
};

/// Device interrupts on the device's core during one workload's timing
/// (devices/runner/interrupts.hpp); all 0 when they could not be counted.
struct interrupt_tally {
  /// Rounds whose two calls were watched, and in those calls each
  /// kernel's interrupts and wall time (each call with the reads around
  /// it).
  uint64_t rounds = 0;
  int64_t baseline = 0;
  int64_t baseline_ns = 0;
  int64_t candidate = 0;
  int64_t candidate_ns = 0;
  /// The most interrupts an ms the candidate's calls allow (their count's
  /// upper bound, times interrupts.hpp's rate_margin), and how many of the
  /// baseline's watched calls had more than three in four calls of theirs would
  /// have at that rate (interrupt_watch::finish).
  double rate_bound_per_ms = 0;
  uint64_t baseline_above = 0;
  /// Over the whole timing, the watched calls included, and its wall time.
  int64_t all = 0;
  int64_t all_ns = 0;
  /// The probe of what one interrupt costs on the core: the interrupts
  /// counted in it and its wall time, and the cost it gave; then the time
  /// taken off each kernel's samples for the interrupts counted around
  /// them (devices/runner/interrupt_cost.hpp). All 0 where nothing was
  /// (fewer than one call in two met an interrupt).
  int64_t probe = 0;
  int64_t probe_ns = 0;
  double cost_ns = 0;
  int64_t baseline_taken_ns = 0;
  int64_t candidate_taken_ns = 0;
  /// Interrupts on the core, over the whole timing, of those not routed
  /// there when it started (irqbalance moved them there), so counted
  /// around no call; and whether the workload was timed again, with them
  /// counted, because they came in one round in two or more
  /// (interrupts.hpp, run_with_routes).
  int64_t unwatched = 0;
  uint32_t retimed = 0;
};

/// What the runner measured on one workload.
struct workload_report {
  std::string workload;
  eval_status status = eval_status::pending;
  /// Why it failed; empty when passed.
  std::string detail;
  /// Largest |candidate - reference| over all checked elements of every
  /// output, and largest |candidate - reference| / |reference| where the
  /// reference is not zero.
  double max_abs_error = 0;
  double max_rel_error = 0;
  /// Paired samples in nanoseconds: element i of both came from round i.
  std::vector<int64_t> baseline_ns;
  std::vector<int64_t> candidate_ns;
  /// Process CPU time summed over the timed candidate calls, and the wall
  /// time of the intervals it was read over (each call with the CPU-time
  /// reads around it).
  int64_t candidate_cpu_ns = 0;
  int64_t candidate_wall_ns = 0;
  /// Input sets rotated through while timing, and the bytes of one set.
  uint32_t input_sets = 0;
  uint64_t set_bytes = 0;
  /// With kernel processes: the round trip of an empty call that was
  /// taken off every sample (median over the workload); 0 otherwise.
  int64_t call_overhead_ns = 0;
  /// The time other tasks had the core during the timed calls, taken off
  /// their samples (devices/runner/run_delay.hpp), summed per kernel.
  int64_t baseline_others_ns = 0;
  int64_t candidate_others_ns = 0;
  /// Interrupts on the device's core while timing.
  interrupt_tally interrupts;
};

/// The runner's answer.
struct runner_reply {
  /// The request's nonce.
  uint64_t nonce = 0;
  /// passed if every workload passed; else the first failure's status.
  eval_status status = eval_status::pending;
  std::string detail;
  std::vector<workload_report> workloads;
  /// Whether unshare(CLONE_NEWNET) succeeded (no network for the kernel).
  bool network_isolated = false;
  /// Whether the kernel ran in a PID namespace of its own (every process
  /// it started was killed with the namespace).
  bool pid_isolated = false;
  /// Whether the kernel's tasks were capped by a pids cgroup (without one,
  /// only RLIMIT_NPROC caps them, which root escapes).
  bool tasks_capped = false;
  /// The CPU the runner ran on.
  int32_t core = -1;
  /// The real user id the kernel code ran as (0: root).
  int64_t kernel_uid = -1;
  /// Whether the hidden-work check counted the CPU time of the
  /// evaluation's cgroup (every process of the kernel, whoever reaped it)
  /// rather than getrusage (the runner's threads and the children it
  /// reaped). The GPU runners have no such check: false.
  bool cgroup_cpu_time = false;
  /// Whether the baseline and the candidate ran in processes of their own
  /// (the request's kernel_processes; devices/runner/kernel_host.hpp).
  bool kernel_processes = false;
  /// With kernel processes: the CPU time the candidate's process used
  /// between its calls, and the part of it while the baseline's calls ran
  /// (kernel_host::idle_cpu_ns, kernel_host::during_other).
  int64_t candidate_idle_cpu_ns = 0;
  int64_t candidate_cpu_during_baseline_ns = 0;
  /// Why the time other tasks had the core could not be taken off the
  /// samples (the schedstat of the thread that made the calls could not be
  /// read); "" when it was.
  std::string others_not_taken_off;
  /// Why the interrupts on the device's core were not counted
  /// (devices/runner/interrupts.hpp); "" when they were, from the
  /// interrupts numbered here (none: no device's goes to the core), each
  /// routed there when some workload started.
  std::string interrupts_not_counted;
  std::vector<int32_t> interrupt_sources;
};

EAT_DESCRIBE(runner_limits, address_space_mib, cpu_s, file_size_mib,
  extra_tasks, run_as_uid, run_as_gid, user_namespace)
EAT_DESCRIBE(runner_request, nonce, kind, dtype, atol, rtol, matched_ratio,
  max_error, deterministic, workloads, reference_so, baseline_so, candidate_so,
  seed, timing, core, limits, kernel_processes)
EAT_DESCRIBE(interrupt_tally, rounds, baseline, baseline_ns, candidate,
  candidate_ns, rate_bound_per_ms, baseline_above, all, all_ns, probe, probe_ns,
  cost_ns, baseline_taken_ns, candidate_taken_ns, unwatched, retimed)
EAT_DESCRIBE(workload_report, workload, status, detail, max_abs_error,
  max_rel_error, baseline_ns, candidate_ns, candidate_cpu_ns, candidate_wall_ns,
  input_sets, set_bytes, call_overhead_ns, baseline_others_ns,
  candidate_others_ns, interrupts)
EAT_DESCRIBE(runner_reply, nonce, status, detail, workloads, network_isolated,
  pid_isolated, tasks_capped, core, kernel_uid, cgroup_cpu_time,
  kernel_processes, candidate_idle_cpu_ns, candidate_cpu_during_baseline_ns,
  others_not_taken_off, interrupts_not_counted, interrupt_sources)

} // namespace eat::devices
