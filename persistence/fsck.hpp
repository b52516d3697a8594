// Consistency check of a run's store (`eat fsck`): the log has no gaps and
// every record decodes and fits the history, every file version's blob
// exists and matches its hash, and the materialised views equal a rebuild
// from the log. Read-only. The parts are read in separate transactions, so
// run it when no process writes the store (`eat fsck` holds the run
// directory's lock). Any thread.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "persistence/store.hpp"

namespace eat::persistence {

/// What fsck looked at and what it found.
struct fsck_report {
  uint64_t events = 0;
  uint64_t files = 0;
  uint64_t views = 0;
  /// Each problem, precisely: what, where, expected and found.
  std::vector<std::string> problems;
};

/// Checks `s`. Fails only when the store cannot be read at all.
caf::expected<fsck_report> fsck(store& s);

} // namespace eat::persistence
