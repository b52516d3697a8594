// The correctness checks the runner applies to every kernel call
// (BENCHMARK-PROTOCOL.md section 2): poisoning of outputs (a NaN pattern for
// floats, a checked sentinel for integers) with guard zones around them,
// input hashing, element-wise comparison per dtype with
// |got - expected| <= atol + rtol * |expected| (on every element, or on a
// task's matched ratio of them under a cap, devices/kinds/tolerance.hpp),
// and the hidden-thread tests.
//
// Runs inside eat-runner, single-threaded; plain functions and values.

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devices/kinds/dtype.hpp"
#include "devices/kinds/problem.hpp"
#include "devices/kinds/tolerance.hpp"

namespace eat::devices {

/// Bit pattern written into float32 outputs before each call: a quiet NaN
/// that no arithmetic produces by accident (poison_pattern() gives every
/// dtype's).
constexpr uint32_t poison_bits = 0x7fa5a5a5u;

/// An output buffer of one dtype with poisoned guard zones before and after
/// it, to catch kernels that write outside their output.
class guarded_output {
public:
  /// Bytes in each guard zone (data() stays 16-byte aligned).
  static constexpr size_t zone_bytes = 64;

  guarded_output(dtype type, size_t n);

  /// A float32 output of `n` elements.
  explicit guarded_output(size_t n) : guarded_output(dtype::float32, n) {
    // nop
  }

  void* data() {
    return storage_.data() + zone_bytes;
  }

  const void* data() const {
    return storage_.data() + zone_bytes;
  }

  /// The output as elements of `T` (which must match the dtype's size).
  template <class T>
  T* as() {
    return static_cast<T*>(data());
  }

  template <class T>
  const T* as() const {
    return static_cast<const T*>(data());
  }

  dtype type() const {
    return type_;
  }

  size_t size() const {
    return n_;
  }

  /// Fills the output and both guard zones with the poison pattern.
  void poison();

  /// Fills the output, but not the guard zones, with the poison pattern, so
  /// that a stray write from an earlier call stays visible. Non-temporal
  /// stores (x86-64): the poisoned lines go to memory and leave the caches,
  /// so a timed call finds its output cold, as it finds its rotated inputs,
  /// not warmed by the poisoning.
  void poison_data();

  /// True if both guard zones still hold the poison pattern.
  bool zones_intact() const;

  /// True if element `i` still holds the poison pattern.
  bool poisoned(size_t i) const;

private:
  dtype type_;
  size_t n_;
  /// Page-aligned from a page up: data() is then 64 bytes into a page.
  page_vector<unsigned char> storage_;
};

/// The first element that failed a comparison, and the largest errors seen.
struct comparison {
  bool ok = true;
  /// Largest |got - expected| over the finite elements compared.
  double max_abs_error = 0;
  /// Largest |got - expected| / |expected| over the finite elements whose
  /// expected value is not zero.
  double max_rel_error = 0;
  /// Elements compared, and those outside atol + rtol * |expected|.
  size_t compared = 0;
  size_t mismatched = 0;
  /// Index, values and tolerance of the first failing element (for "too
  /// few matched": the first element outside the tolerance).
  size_t index = 0;
  double got = 0;
  double expected = 0;
  double tolerance = 0;
  /// The matched ratio the comparison required (1: every element).
  double required_ratio = 1;
  /// Why it failed: "mismatch", "non-finite value", "all zeros", "not
  /// written" (an integer output still holding its poison sentinel),
  /// "above the maximum error" or "too few matched" (more elements outside
  /// the tolerance than the matched ratio allows).
  std::string reason;
};

/// Compares `n` elements of type `type` at `got` against a reference
/// computed in double.
comparison compare_outputs(dtype type, const void* got, const double* expected,
  size_t n, const tolerance& tol);

/// Compares `n` elements of type `type` at `got` against another output of
/// the same type (the baseline's, on the same inputs).
comparison compare_outputs(dtype type, const void* got, const void* expected,
  size_t n, const tolerance& tol);

/// As the comparison with another output above, for a sample of elements:
/// without the rules that judge a whole output: "all zeros" (a sampled
/// element may be an exact zero where the other output holds a tiny value
/// within tolerance, e.g. an fp16 subnormal) and, for a matched ratio below
/// 1, the ratio (a sample's share of mismatches varies by chance; the cap
/// still holds for every sampled element).
comparison compare_elements(dtype type, const void* got, const void* expected,
  size_t n, const tolerance& tol);

/// Compares a float32 output against a reference computed in fp64.
comparison compare_outputs(
  const float* got, const double* expected, size_t n, const tolerance& tol);

/// Compares a float32 output against another float32 output.
comparison compare_outputs(
  const float* got, const float* expected, size_t n, const tolerance& tol);

/// Renders a failed comparison, e.g. "C[3][5] = 1.5 but expected 1.25
/// (|error| 0.25 > tolerance 0.000225)"; `element` names the element.
std::string describe(const comparison& x, const std::string& element);

/// Returns a 64-bit hash of the bytes of `buffers` (not cryptographic; it
/// detects accidental and careless input mutation).
uint64_t hash_buffers(const std::vector<typed_buffer>& buffers);

/// The same over float buffers.
uint64_t hash_buffers(const std::vector<std::vector<float>>& buffers);

/// Returns the index of the first of `n` elements of `size` bytes whose
/// bits differ, or `n`.
size_t first_bitwise_difference(
  const void* x, const void* y, size_t n, size_t size);

/// The same over floats.
size_t first_bitwise_difference(const float* x, const float* y, size_t n);

/// Returns the number of threads of this process (entries of /proc/self/task).
size_t thread_count();

/// Detail of a kernel that started processes.
inline constexpr const char* child_processes_text
  = "child processes: the kernel started processes (a kernel must do its "
    "work on the calling thread)";

/// True if this process has a child process, running or not yet reaped (a
/// kernel that forked; the runner itself starts none), or, in the runner's
/// own PID namespace, if any process there but init and this one lives
/// (a kernel's grandchild that left with setsid and a double fork).
bool has_child_processes();

/// True if this process is the worker of the runner's own PID namespace
/// (devices/runner/pid_namespace.hpp).
bool in_own_pid_namespace();

/// In the runner's own PID namespace: the last PID the namespace gave to a
/// process or thread (/proc/sys/kernel/ns_last_pid, which the kernel
/// answers for the reader's namespace). Every thread or process started
/// there moves it, one that has already ended too. -1 outside such a
/// namespace (it would count the machine's processes) or where it cannot
/// be read.
int64_t last_pid_given();

/// Returns the CPU time of the whole process (all its threads, live or
/// gone). Not CLOCK_PROCESS_CPUTIME_ID: once RLIMIT_CPU arms the process CPU
/// timer, Linux serves that clock from a tick-granular cache (measured: 0.2
/// ms reported for 13 ms of work), while getrusage sums the threads' precise
/// runtimes (microsecond resolution).
int64_t process_cpu_ns();

/// Returns the CPU time of the child processes this process has reaped
/// (getrusage's RUSAGE_CHILDREN, with what they reaped in turn).
int64_t reaped_children_cpu_ns();

/// Returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID, brought
/// up to date when read).
int64_t thread_cpu_ns();

/// The CPU time used by everything but the calling thread: the process's
/// other threads (live or gone), the child processes it has reaped and
/// those the PID namespace's init has reaped (a grandchild that escaped
/// with setsid and a double fork, a helper started with CLONE_PARENT;
/// devices/runner/pid_namespace.hpp), or, once count_cpu_in_cgroup() was
/// called, every task of the evaluation's cgroup. The runner does all its
/// work on one thread and starts no processes, so what this gains over an
/// interval is a kernel's hidden work, whether it overlapped the kernel's
/// own call or ran beside the baseline's.
///
/// The process (or cgroup) and the calling thread cannot be read at one
/// instant, so the thread is read just before and just after: `least` and
/// `most` bound the others' time. Whatever the calling thread does between
/// the reads (a stall of the virtual machine counts as its CPU time, 1.9 and
/// 8 ms were seen) widens the bounds and never counts as the others'.
struct other_cpu {
  int64_t least = 0;
  int64_t most = 0;
  /// Empty, or why the cgroup's CPU time could not be read (the bounds are
  /// then 0).
  std::string error;
};

/// Reads the bounds now.
other_cpu other_cpu_now();

/// Makes other_cpu_now() read the evaluation's CPU time from `file`, a
/// cgroup's CPU-time file (devices/runner/cgroups.hpp; `v2` says which
/// format), from now on; an empty `file` goes back to getrusage. Called
/// once by the sandbox, before kernel code is loaded. The reading thread's
/// own time is included there since it joined the cgroup at its start, as
/// the waiter's and init's (idle) time is.
void count_cpu_in_cgroup(const std::string& file, bool v2);

/// The least CPU time everything but the calling thread can have used
/// from `before` to `after`.
inline int64_t other_cpu_between(const other_cpu& before,
                                 const other_cpu& after) {
  return after.least - before.most;
}

/// Detail of a kernel whose other threads or reaped child processes used
/// `ns` of CPU time during its timed calls, or "" if that is within the
/// slack of 1 ms for the clocks' rounding.
std::string hidden_work_text(int64_t ns);

/// True if `cpu_ns` of process CPU time over `wall_ns` of wall time (summed
/// over `calls` timed calls) shows work on other threads: more than 1.5x the
/// wall time plus a slack of 2 ms and 20 us per call for clock granularity.
bool shows_hidden_threads(int64_t cpu_ns, int64_t wall_ns, uint64_t calls);

} // namespace eat::devices
