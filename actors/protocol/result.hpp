// The result of evaluating one candidate on one device (see
// BENCHMARK-PROTOCOL.md, "What every result records"). Crosses machines.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/describe.hpp"

namespace eat {

/// Outcome of an evaluation.
enum class eval_status : uint8_t {
  /// Not evaluated yet.
  pending,
  /// Correct on every check and timed.
  passed,
  /// Produced wrong outputs (or mutated inputs, or was not deterministic).
  incorrect,
  /// Did not compile.
  compile_error,
  /// Crashed, exited early, or sent a malformed result.
  runtime_error,
  /// Exceeded its wall-clock deadline and was killed.
  timeout,
  /// Ran, but a gate rejected it (e.g. hidden threads, below speed of light).
  rejected,
};
EAT_WIRE_ENUM(eval_status, rejected)

/// Returns the status name, e.g. "compile_error".
std::string to_string(eval_status x);

/// Measurements of one workload. Times are in nanoseconds.
struct workload_result {
  std::string workload;
  eval_status status = eval_status::pending;
  /// Why it failed; empty when passed.
  std::string detail;
  /// Largest |candidate - reference| over all checked elements.
  double max_abs_error = 0;
  /// Largest |candidate - reference| / |reference| over the checked elements
  /// whose reference is not zero.
  double max_rel_error = 0;
  /// Paired samples taken of baseline and candidate.
  uint32_t samples = 0;
  double baseline_median_ns = 0;
  double candidate_median_ns = 0;
  double candidate_mean_ns = 0;
  double candidate_min_ns = 0;
  double candidate_p20_ns = 0;
  double candidate_p80_ns = 0;
  /// Coefficient of variation of the candidate samples.
  double candidate_cv = 0;
  /// t_baseline / t_candidate (medians) with a bootstrap 95 % interval.
  double speedup = 0;
  double speedup_low = 0;
  double speedup_high = 0;
  /// Fraction of the speed of light reached: T_SOL / candidate median, with
  /// T_SOL from the device's measured peaks (0 when unknown).
  double sol_fraction = 0;
  /// The process's CPU time over the wall time of the timed candidate calls
  /// (BENCHMARK-PROTOCOL.md section 3): at most about 1 for a kernel on one
  /// thread (less for short calls or time off the core: the CPU clock
  /// advances at scheduler ticks), above 1.5 rejected as hidden threads; 0
  /// when not measured.
  double candidate_cpu_ratio = 0;
};
EAT_DESCRIBE(workload_result, workload, status, detail, max_abs_error,
             max_rel_error, samples,
             baseline_median_ns, candidate_median_ns, candidate_mean_ns,
             candidate_min_ns, candidate_p20_ns, candidate_p80_ns, candidate_cv,
             speedup, speedup_low, speedup_high, sol_fraction,
             candidate_cpu_ratio)
// Added after event logs stored results: logs without it still decode.
EAT_DESCRIBE_OPTIONAL(workload_result, candidate_cpu_ratio)

/// The full result of one evaluation.
struct eval_result {
  std::string candidate;
  eval_status status = eval_status::pending;
  /// Why it did not pass; empty when passed.
  std::string detail;
  std::vector<workload_result> workloads;
  /// Geometric mean of per-workload speedups; 0 unless every workload passed.
  double geomean_speedup = 0;
  /// Hex SHA-256 of the candidate source.
  std::string source_hash;
  /// Device identity, e.g. "cpu0: Intel Xeon ... core 1".
  std::string device;
  /// Compiler identity and flags.
  std::string compiler;
  /// Compiler output (warnings, errors), truncated.
  std::string build_log;
  /// How it was measured: timer, sampling, sandbox (e.g. network isolation).
  std::string method;
  /// Seed used for the inputs.
  uint64_t seed = 0;
  double compile_s = 0;
  double run_s = 0;
};
EAT_DESCRIBE(eval_result, candidate, status, detail, workloads, geomean_speedup,
             source_hash, device, compiler, build_log, method, seed, compile_s,
             run_s)

} // namespace eat
