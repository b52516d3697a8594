// Helpers of the benchmarks in bench/: a scratch directory, a stopwatch,
// unwrapping results (a benchmark that meets an error stops with a message),
// and the report table. Single-threaded; owned by the benchmark's main.

#pragma once

#include <cerrno> // program_invocation_short_name (GNU)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <caf/expected.hpp>

#include "actors/protocol/error.hpp"
#include "tests/support/temp_dir.hpp"

namespace eat::bench {

/// A fresh directory under the system temp dir, removed on destruction
/// (the tests' helper: one implementation for tests and benchmarks).
using scratch_dir = eat::test::temp_dir;

/// Returns the CPU time this process has used, in seconds.
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

/// Measures wall-clock and process CPU time from its construction.
class stopwatch {
public:
  stopwatch()
    : start_(std::chrono::steady_clock::now()),
      cpu_start_(process_cpu_seconds()) {
    // nop
  }

  /// Wall-clock seconds since construction.
  double seconds() const {
    std::chrono::duration<double> d = std::chrono::steady_clock::now() - start_;
    return d.count();
  }

  /// CPU seconds this process used since construction.
  double cpu_seconds() const {
    return process_cpu_seconds() - cpu_start_;
  }

private:
  std::chrono::steady_clock::time_point start_;
  double cpu_start_;
};

/// Returns the value of `x`; prints the error and exits when there is none.
template<class T>
T must(caf::expected<T> x, const char* what) {
  if (!x) {
    std::fprintf(stderr, "%s: %s failed: %s\n", program_invocation_short_name,
      what, render(x.error()).c_str());
    std::exit(1);
  }
  if constexpr (!std::is_void_v<T>)
    return std::move(*x);
}

/// How many figures were printed and how many met their target.
struct tally {
  int figures = 0;
  int met = 0;

  void add(bool pass) {
    figures += 1;
    met += pass ? 1 : 0;
  }
};

/// Prints the header of the report table.
inline void print_header() {
  std::printf("%-46s %14s  %-16s %s\n", "figure", "value", "target", "result");
}

/// Prints one figure with its target and PASS or MISS (or "-" for a figure
/// without target); returns `pass`.
inline bool print_figure(const std::string& name, double value,
  const char* unit, const std::string& target, bool pass) {
  char number[64];
  std::snprintf(
    number, sizeof number, value >= 100 ? "%.0f %s" : "%.2f %s", value, unit);
  const char* result = target == "-" ? "-" : pass ? "PASS" : "MISS";
  std::printf(
    "%-46s %14s  %-16s %s\n", name.c_str(), number, target.c_str(), result);
  std::fflush(stdout);
  return pass;
}

/// Prints an informative line (no target).
inline void print_note(const std::string& text) {
  std::printf("  %s\n", text.c_str());
  std::fflush(stdout);
}

} // namespace eat::bench
