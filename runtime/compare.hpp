// Matched-budget comparisons (`eat compare`, bench/search_bench): the same
// configuration run in the eat, flat and single modes with the same seeds,
// and the table of their results. The runs are `eat run` child processes;
// this file holds the bookkeeping and the table, plain code for any thread.

#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace eat {

/// One finished run of a comparison.
struct compare_run {
  std::string task;
  std::string mode;
  uint64_t seed = 0;
  /// Geometric-mean speedup of the run's best kernel (0 when none passed).
  double best_speedup = 0;
  uint64_t tokens = 0;
  uint64_t evaluations = 0;
  double seconds = 0;
  /// Empty when the run finished; else why not.
  std::string failure;
};

/// One line of the table: a task and mode over its seeds.
struct compare_row {
  std::string task;
  std::string mode;
  size_t runs = 0;
  double mean_speedup = 0;
  /// Sample standard deviation over seeds (0 for one seed).
  double sd_speedup = 0;
  double mean_tokens = 0;
  double mean_evaluations = 0;
  size_t failed = 0;
};

/// Groups `runs` by task and mode (in the order first seen).
std::vector<compare_row> summarize_runs(const std::vector<compare_run>& runs);

/// The table `eat compare` prints.
std::string format_table(const std::vector<compare_row>& rows);

/// Reads the result of the run in `run_dir` from its views.
caf::expected<compare_run> read_run_result(const std::filesystem::path& run_dir);

} // namespace eat
