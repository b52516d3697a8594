// A synthetic but realistic run log for benchmarks: run_started, a few
// team_spawned, then candidate_submitted / evaluation_finished pairs whose
// bodies are encoded with eat::wire::encode like the runtime's. Candidates
// carry a kernel source of about 800 bytes and results two workloads, so an
// event weighs about what a real run's does. Deterministic (no clock, no
// random device). Single-threaded; owned by the benchmark that makes it.

#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "actors/protocol/event.hpp"

namespace eat::bench {

/// Makes the events of a run log in order, a batch at a time.
class synthetic_run {
public:
  /// A log of `total` events with `teams` teams.
  explicit synthetic_run(uint64_t total, uint64_t teams = 4);

  /// Returns the next at most `max` events (empty at the end). Their seq is
  /// left 0 for the log to assign; unix_ms is set.
  std::vector<event> next(size_t max);

  /// Number of events made so far.
  uint64_t made() const noexcept {
    return made_;
  }

private:
  event make(uint64_t index) const;

  uint64_t total_;
  uint64_t teams_;
  uint64_t made_ = 0;
};

} // namespace eat::bench
