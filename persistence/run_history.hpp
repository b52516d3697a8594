// The state of a run, rebuilt from its event log: a pure function of the
// events (docs/architecture.md, "Resume"). The supervisor starts from it when
// a run is resumed, and `eat status` prints it.
// Plain value type; build it on any thread.

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/event.hpp"
#include "actors/protocol/progress.hpp"
#include "actors/protocol/result.hpp"

namespace eat {

/// What one team has done so far.
struct team_history {
  team_spawned spawned;
  /// Evaluated candidates, in evaluation order.
  std::vector<scored_candidate> scored;
  /// Submitted but never evaluated (the run stopped in between), in order.
  std::vector<candidate> unfinished;
  /// Candidates submitted by this team, evaluated or not.
  uint64_t submitted = 0;
  uint64_t tokens = 0;
};

/// A run's state after the last event of its log.
struct run_history {
  /// The run_started event; `started` is false for an empty log.
  bool started = false;
  run_started start;
  /// Teams by id, with their candidates.
  std::map<std::string, team_history> teams;
  /// Every candidate and result by candidate id.
  std::map<std::string, candidate> candidates;
  std::map<std::string, eval_result> results;
  uint64_t evaluations = 0;
  uint64_t passed = 0;
  uint64_t tokens = 0;
  /// The best passed candidate ("" when none passed).
  std::string best_candidate;
  double best_speedup = 0;
  /// Times the run was resumed, and whether its last event is run_finished.
  uint64_t resumes = 0;
  bool finished = false;
  run_summary last_summary;
  uint64_t last_seq = 0;
};

/// Applies one event to `h`. Fails on an event that does not fit the history
/// (malformed body, result for an unknown candidate, gap in the sequence).
caf::expected<void> apply(run_history& h, const event& e);

/// Rebuilds a history from a whole log.
caf::expected<run_history> rebuild(const std::vector<event>& events);

/// Makes the summary of a run from its history.
run_summary summarize(const run_history& h, std::string reason);

} // namespace eat
