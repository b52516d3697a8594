// The harness inside eat-runner: loads the three shared objects, then checks
// and times the candidate against the reference and baseline on every
// workload (BENCHMARK-PROTOCOL.md sections 2 and 3; docs/harness.md).
//
// Runs in the runner process after the sandbox is in place, on its only
// thread; candidate code runs in this same address space, or, with
// `kernel_processes`, in a process of its own (kernel_host.hpp).

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/protocol/task.hpp"
#include "devices/kind.hpp"
#include "devices/options.hpp"
#include "devices/runner/code_lock.hpp"
#include "devices/runner/interrupts.hpp"
#include "devices/runner/kernel_host.hpp"
#include "devices/runner/secrets.hpp"
#include "devices/runner/timing_sets.hpp"
#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// Everything one workload's phases need; built once per request.
struct harness_context {
  const kind* k = nullptr;
  /// Entry points found with dlsym.
  void* reference = nullptr;
  void* baseline = nullptr;
  void* candidate = nullptr;
  /// The reference's code, inaccessible except while the harness calls it.
  code_lock reference_code;
  /// fp32 kinds: the task's tolerances (definition outputs carry theirs).
  tolerance tol;
  /// False: a second run is checked against the reference, not bit for
  /// bit against the first (task_spec::deterministic).
  bool deterministic = true;
  timing_options timing;
  /// Bytes the timing input sets may occupy together.
  uint64_t memory_budget = 0;
  /// How the timed calls find their inputs cold (timing_sets.hpp).
  rotation_plan rotation;
  /// With kernel processes: the processes that run the baseline and the
  /// candidate (`baseline` and `candidate` are then null).
  kernel_host* baseline_host = nullptr;
  kernel_host* candidate_host = nullptr;
  /// Without kernel processes: the schedstat of the runner's thread, which
  /// makes the calls (run_delay.hpp); null when none could be opened.
  const schedstat_file* caller_sched = nullptr;
  /// The interrupts on the device's core (interrupts.hpp); null when they
  /// cannot be counted.
  const interrupt_counter* interrupts = nullptr;
  /// With kernel processes (secrets.hpp): the key of the keyed hashes by
  /// which the runner sees whether a kernel's process wrote buffers it must
  /// not, and the key under which the baseline's timed outputs are kept
  /// encrypted while the candidate's process could read them.
  secret_key hash_key{};
  secret_key mask_key{};
};

enum class kernel_role { baseline, candidate };

/// Calls the baseline or the candidate on `inputs` and `outputs`, in this
/// process or in its own. Its `error` says why a process failed ("" when
/// none did), its `status` what that makes the evaluation: rejected when
/// the baseline's process was stopped (kernel_host::call).
host_call call_kernel(const harness_context& ctx, kernel_role who,
  const problem& p, const void* const* inputs, void* const* outputs);

/// What a kernel's process used between its calls (kernel_host).
struct idle_figures {
  int64_t idle_cpu_ns = 0;
  int64_t largest_idle_ns = 0;
  uint64_t calls = 0;
  int64_t call_cpu_ns = 0;
};

/// The most CPU time in one gap between calls, or in one of the other
/// kernel's calls, that is put down to the machine rather than the kernel
/// (a process that takes over 50 ms to get back to waiting, a VM whose
/// host charges a stolen vCPU to the process that ran): it can slow one
/// sample of hundreds.
constexpr int64_t excused_gap_ns = 10'000'000;

/// Whether the candidate's process did hidden work between its calls: its
/// CPU time there, less its largest gap (up to excused_gap_ns), above 1 ms
/// plus twice the baseline's rate a call plus 1 % of its CPU time in calls
/// or of the baseline's, whichever is less (a candidate cannot raise its
/// allowance by working longer in its own calls).
bool worked_between_calls(
  const idle_figures& candidate, const idle_figures& baseline);

/// Whether the candidate's process worked while the baseline's calls ran,
/// slowing them (a speedup it did not earn): its CPU time there, less the
/// most in one call (up to excused_gap_ns: one sample of hundreds), above
/// 100 us plus 0.5 % of those calls' wall time. A waiting process uses
/// nothing there (measured once the runner settles each call); what the
/// baseline's process used during the candidate's calls is no allowance,
/// since the candidate's process could wake it to raise one.
bool worked_during_baseline(const during_other_calls& candidate);

/// With kernel processes: why the candidate is rejected for calls that
/// ended before its work did, or "". Each element of `candidate` and
/// `baseline` is a timed call's CPU time in its process, from posting it
/// to the process being back to waiting, less the call's sample (wall
/// time until the process said it was done). A kernel's process runs on
/// one core, so an honest call's CPU time is its sample at most, plus the
/// way back to waiting, as in the baseline's. A kernel that marks its call
/// done itself (the words are in its process) and works on stops the
/// sample early: a red-team candidate showed 5.3x for the baseline's loop.
/// Rejects when the candidate's median exceeds the baseline's (or 0, where
/// the baseline's calls used less CPU time than their samples) by more
/// than 3 us plus 3 % of `candidate_wall_ns`, its median sample.
std::string early_end_text(std::vector<double> candidate,
  std::vector<double> baseline, double candidate_wall_ns);

/// With kernel processes: why the candidate's process is rejected for the
/// CPU time it used while the baseline's calls ran or between its own
/// calls (hidden work), or "".
std::string idle_work_text(const harness_context& ctx);

/// Verdict and largest error of the correctness phase of one workload.
struct check_outcome {
  eval_status status = eval_status::passed;
  std::string detail;
  double max_abs_error = 0;
  double max_rel_error = 0;
};

/// The task's tolerance as the request carries it (fp32 kinds; definition
/// outputs carry their own).
tolerance request_tolerance(const runner_request& req);

/// The verdict of a case whose first run passed (`first`) and whose second
/// run on the same inputs was checked against the reference (`again`), for
/// tasks that allow atomics-level differences between runs: the larger
/// errors of the two, and the second's failure, named as the second run's.
check_outcome second_run(
  const check_outcome& again, const check_outcome& first);

/// Verdict and samples of the timing phase of one workload.
struct timing_outcome {
  eval_status status = eval_status::passed;
  std::string detail;
  /// Paired samples in nanoseconds (round i gives element i of both).
  std::vector<int64_t> baseline_ns;
  std::vector<int64_t> candidate_ns;
  /// Process CPU time summed over the timed candidate calls, and the wall
  /// time of the intervals it was read over (each call with the CPU-time
  /// reads around it).
  int64_t candidate_cpu_ns = 0;
  int64_t candidate_wall_ns = 0;
  uint32_t input_sets = 0;
  uint64_t set_bytes = 0;
  /// With kernel processes: the median round trip of an empty call, taken
  /// off every sample.
  int64_t call_overhead_ns = 0;
  /// The time other tasks had the core in the timed calls, taken off their
  /// samples (devices/runner/run_delay.hpp), summed per kernel.
  int64_t baseline_others_ns = 0;
  int64_t candidate_others_ns = 0;
  /// Interrupts on the device's core while timing (interrupts.hpp).
  interrupt_tally interrupts;
};

/// The report of workload `name`: `check`'s verdict and errors, then, if
/// it passed, `time`'s verdict and samples (the CPU and GPU harnesses'
/// phases of one workload).
workload_report check_then_time(const std::string& name,
  const std::function<check_outcome()>& check,
  const std::function<timing_outcome()>& time);

/// Bytes of the memory a runner shares with its kernel processes: half its
/// address space (16 GiB without a limit), reserved, not committed.
size_t kernel_arena_bytes(uint64_t address_space_mib);

/// Runs `req` to its reply: loads the kernels, then each workload in turn
/// until one fails. Never throws.
runner_reply run_request(const runner_request& req);

/// Checks the candidate on workload `w` against the reference: `check_seeds`
/// random cases and one structured case drawn from `workload_seed`.
check_outcome check_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed);

/// Times baseline and candidate on `w` in paired rounds, then checks the
/// timed outputs and the CPU-time gate.
timing_outcome time_workload(
  const harness_context& ctx, const workload& w, uint64_t workload_seed);

} // namespace eat::devices
