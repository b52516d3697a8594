// The correctness checks the runner applies to every kernel call
// (BENCHMARK-PROTOCOL.md section 2): NaN poisoning of outputs with guard
// zones around them, input hashing, element-wise comparison with
// |got - expected| <= atol + rtol * |expected|, and the hidden-thread tests.
//
// Runs inside eat-runner, single-threaded; plain functions and values.

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eat::devices {

/// Bit pattern written into outputs before each call: a quiet NaN that no
/// arithmetic produces by accident.
constexpr uint32_t poison_bits = 0x7fa5a5a5u;

/// An output buffer with poisoned guard zones before and after it, to catch
/// kernels that write outside their output.
class guarded_output {
public:
  /// Floats in each guard zone (64 bytes: data() stays 16-byte aligned).
  static constexpr size_t zone = 16;

  explicit guarded_output(size_t n);

  float* data() {
    return storage_.data() + zone;
  }

  const float* data() const {
    return storage_.data() + zone;
  }

  size_t size() const {
    return n_;
  }

  /// Fills the output and both guard zones with the poison pattern.
  void poison();

  /// Fills the output, but not the guard zones, with the poison pattern, so
  /// that a stray write from an earlier call stays visible.
  void poison_data();

  /// True if both guard zones still hold the poison pattern.
  bool zones_intact() const;

private:
  std::vector<float> storage_;
  size_t n_;
};

/// The first element that failed a comparison, and the largest error seen.
struct comparison {
  bool ok = true;
  /// Largest |got - expected| over the finite elements compared.
  double max_abs_error = 0;
  /// Index, values and tolerance of the first failing element.
  size_t index = 0;
  double got = 0;
  double expected = 0;
  double tolerance = 0;
  /// Why it failed: "mismatch", "non-finite value" or "all zeros".
  std::string reason;
};

/// Compares `got` against a reference computed in fp64.
comparison compare_outputs(
  const float* got, const double* expected, size_t n, double atol, double rtol);

/// Compares `got` against another fp32 output (the baseline's, on the same
/// inputs).
comparison compare_outputs(
  const float* got, const float* expected, size_t n, double atol, double rtol);

/// Renders a failed comparison, e.g. "C[3][5] = 1.5 but expected 1.25
/// (|error| 0.25 > tolerance 0.000225)"; `element` names the element.
std::string describe(const comparison& x, const std::string& element);

/// Returns a 64-bit hash of the bytes of `buffers` (not cryptographic; it
/// detects accidental and careless input mutation).
uint64_t hash_buffers(const std::vector<std::vector<float>>& buffers);

/// Returns the index of the first element whose bits differ, or `n`.
size_t first_bitwise_difference(const float* x, const float* y, size_t n);

/// Returns the number of threads of this process (entries of /proc/self/task).
size_t thread_count();

/// Detail of a kernel that started processes.
inline constexpr const char* child_processes_text
  = "child processes: the kernel started processes (a kernel must do its "
    "work on the calling thread)";

/// True if this process has a child process, running or not yet reaped (a
/// kernel that forked; the runner itself starts none).
bool has_child_processes();

/// True if `cpu_ns` of process CPU time over `wall_ns` of wall time (summed
/// over `calls` timed calls) shows work on other threads: more than 1.5x the
/// wall time plus a slack of 2 ms and 20 us per call for clock granularity.
bool shows_hidden_threads(int64_t cpu_ns, int64_t wall_ns, uint64_t calls);

} // namespace eat::devices
