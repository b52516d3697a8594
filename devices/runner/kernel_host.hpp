// Kernels in processes of their own (docs/harness.md, "Kernel processes").
// With `kernel_processes` on, eat-runner never loads the candidate or the
// baseline: each runs in a process that the runner starts for it (its own
// executable again, `--kernel-host`), which maps the runner's shared arena
// (devices/shared_arena.hpp) at the same address, makes itself
// non-dumpable, confines itself (seccomp_filter.hpp: no processes, no
// signals to others, no other core), loads the kernel and then, call after
// call, waits on a futex in the arena until the runner posts a call, makes
// it and posts that it is done.
//
// The runner, which alone holds the seeds, the reference, the samples, the
// nonce and the reply pipe, times each call from posting to done, checks
// what came back, and reads the kernel process's CPU clock around every
// call: CPU time it used between its calls is counted (idle_cpu_ns), so
// that work cannot be moved out of the timed calls. A kernel cannot reach
// what decides its verdict: the runner's memory is not shared with it.
//
// Used by the runner's only thread.

#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <sys/types.h>

#include "actors/protocol/result.hpp"
#include "devices/kinds/problem.hpp"
#include "devices/page_allocator.hpp"
#include "devices/runner/run_delay.hpp"
#include "devices/shared_arena.hpp"

namespace eat::devices {

/// The first argument of eat-runner that makes it a kernel's process.
constexpr const char* kernel_host_flag = "--kernel-host";

/// Exit statuses of a kernel's process that ends before its kernel is
/// loaded: it could not map the arena at the runner's address, or its
/// control block.
constexpr int host_cannot_map = 3;
constexpr int host_cannot_map_control = 4;

/// The most a kernel's process may write to its standard output and error
/// (RLIMIT_FSIZE: beyond it the process is killed by SIGXFSZ).
constexpr unsigned long kernel_output_bytes = 1UL << 20;

/// How the child `pid` of the caller stopped, or was stopped and then
/// continued, by a signal since the caller last asked ("was stopped by
/// SIGSTOP", "was stopped and continued by a signal"), or "" when it was
/// not (waitid: only its parent sees it).
std::string stop_seen(pid_t pid);

/// What the runner posts to a kernel's process: a page in a memory file
/// that only the runner and that process map, never in the arena that
/// both kernels' processes share. Through the other kernel's words a
/// kernel could wait for its calls, wake with them, or hold back their
/// start or end (take their wake-ups) without using CPU time.
struct host_control {
  static constexpr size_t max_buffers = 32;
  static constexpr size_t max_dims = 32;
  static constexpr size_t error_bytes = 512;

  enum op_code : uint32_t { call = 1, nothing = 2, map = 3 };

  /// Sequence numbers: the runner sets `go`, the process sets `done` to
  /// the same number when the call has returned (1: loaded).
  std::atomic<uint32_t> go{0};
  std::atomic<uint32_t> done{0};
  /// Set by the process to the `done` it posted just before it waits for
  /// the next `go`: back to waiting, bar the wait's system call.
  std::atomic<uint32_t> parked{0};
  uint32_t op = nothing;
  /// The kind whose ABI the call takes (find_kind).
  char kind[32] = {};
  uint32_t inputs = 0;
  uint32_t outputs = 0;
  uint32_t dims = 0;
  int64_t dim[max_dims] = {};
  const void* input[max_buffers] = {};
  void* output[max_buffers] = {};
  /// Op `map`: the span of the arena to map into the page tables.
  void* map_from = nullptr;
  uint64_t map_bytes = 0;
  /// Why the process could not load its kernel (`failure`), or "".
  enum failure_code : uint32_t { none = 0, not_loaded = 1, not_confined = 2 };
  uint32_t failure = none;
  char error[error_bytes] = {};
};

/// One call made in a kernel's process.
struct host_call {
  /// Steady-clock time from posting the call to seeing it done.
  int64_t wall_ns = 0;
  /// The process's CPU time over the call (all its threads).
  int64_t cpu_ns = 0;
  /// The part of wall_ns in which other tasks had the core while the
  /// process's main thread waited for it (devices/runner/run_delay.hpp);
  /// 0 where its schedstat cannot be read.
  int64_t others_ns = 0;
  /// Why the process failed (it died or exited during the call, or a
  /// kernel's process stopped), or "".
  std::string error;
  /// What `error` makes the evaluation: a runtime error, or rejected when
  /// the baseline's process was stopped (only the candidate's can).
  eval_status status = eval_status::runtime_error;
};

/// The bytes of a control block's memory file.
constexpr size_t control_bytes = page_bytes;
static_assert(sizeof(host_control) <= control_bytes);

/// What a kernel's process used while the other kernel's calls ran
/// (kernel_host::watch).
struct during_other_calls {
  /// CPU time in all of them, and in the one where it used the most.
  int64_t cpu_ns = 0;
  int64_t largest_ns = 0;
  /// The other's calls, and their wall time.
  uint64_t calls = 0;
  int64_t wall_ns = 0;
  /// The other's calls during which it used more than 2 us.
  uint64_t busy_calls = 0;
};

class kernel_host {
public:
  /// Starts the process for `entry` in the shared object `so`, whose role
  /// ("candidate", "baseline") names it in messages. Returns the host, or
  /// null with `status` and `why`: the kernel could not be loaded
  /// (compile_error for the candidate, rejected for the baseline) or the
  /// process could not be started (runtime_error). Its control block is
  /// its own (see host_control).
  static std::unique_ptr<kernel_host> start(shared_arena& arena,
    const std::string& so, const char* entry, const std::string& role,
    eval_status& status, std::string& why);

  kernel_host(const kernel_host&) = delete;
  kernel_host& operator=(const kernel_host&) = delete;

  /// Kills the process and reaps it.
  ~kernel_host();

  /// Calls the kernel on `inputs` and `outputs` (buffers in the arena)
  /// with the ABI of `p`'s kind.
  host_call call(
    const problem& p, const void* const* inputs, void* const* outputs);

  /// A round trip without a call: the cost of posting and waiting, which
  /// the timing phase takes off every sample.
  host_call call_nothing();

  /// Has the process map the arena's used span (shared_arena::used_bytes)
  /// into its page tables, untimed: the runner drew the buffers through
  /// its own mapping, and a kernel's first touch of each 4 KiB page of
  /// them would otherwise take a page fault in a timed call (a first block
  /// of calls at 3.5x their time: docs/harness.md, "Kernel processes").
  host_call map_arena();

  /// Why the main thread's schedstat could not be opened ("" when it was:
  /// the time other tasks had the core is then taken off each call).
  const std::string& schedstat_why_not() const {
    return sched_.why_not();
  }

  /// CPU time the process used between its calls since it loaded.
  int64_t idle_cpu_ns() const {
    return idle_cpu_ns_;
  }

  /// The most CPU time it used between two calls.
  int64_t largest_idle_ns() const {
    return largest_idle_ns_;
  }

  /// Gaps between calls in which it used more than busy_gap_ns of CPU time.
  uint64_t busy_gaps() const {
    return busy_gaps_;
  }

  /// CPU time it used within its calls.
  int64_t call_cpu_ns() const {
    return call_cpu_ns_;
  }

  /// The CPU time between two calls above which the gap counts as busy: a
  /// process that got back to waiting uses none (0 ns measured).
  static constexpr int64_t busy_gap_ns = 2'000;

  /// Calls made (call() and call_nothing(); not map_arena()).
  uint64_t calls() const {
    return calls_;
  }

  /// Has each call of this process (timed or empty; not map_arena()) read
  /// `other`'s CPU clock just before it is posted and once it is settled,
  /// so that `other` counts the CPU time it used while this process's
  /// kernel ran (null: no longer).
  void watch(kernel_host* other) {
    watched_ = other;
  }

  /// What the process used while the other's calls ran (watch()).
  const during_other_calls& during_other() const {
    return during_other_;
  }

private:
  kernel_host(
    shared_arena& arena, host_control* control, pid_t pid, std::string role);

  host_call post(uint32_t op);

  /// Waits until `done` reaches `seq`; returns why the process ended first.
  std::string wait_done(uint32_t seq);

  /// Waits until the process is back to waiting for its next call.
  void settle(uint32_t seq);

  /// The process's CPU time in ns, or -1 if it cannot be read.
  int64_t cpu_now() const;

  shared_arena& arena_;
  host_control* control_;
  pid_t pid_;
  std::string role_;
  clockid_t clock_ = 0;
  /// The main thread's schedstat, and that of the runner's thread that
  /// makes the calls (run_delay.hpp).
  schedstat_file sched_;
  schedstat_file runner_sched_;
  uint32_t seq_ = 1;
  int64_t last_cpu_ = 0;
  int64_t idle_cpu_ns_ = 0;
  int64_t largest_idle_ns_ = 0;
  uint64_t busy_gaps_ = 0;
  int64_t call_cpu_ns_ = 0;
  uint64_t calls_ = 0;
  kernel_host* watched_ = nullptr;
  during_other_calls during_other_;
  bool reaped_ = false;
};

/// The main of a kernel's process (`eat-runner --kernel-host ...`).
int kernel_host_main(int argc, char** argv);

} // namespace eat::devices
