// The state of a run, rebuilt from its event log: a pure function of the
// events (docs/architecture.md, "Resume"). The supervisor starts from it when
// a run is resumed, and `eat status` prints it.
// Plain value type; build it on any thread.

#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/event.hpp"
#include "actors/protocol/progress.hpp"
#include "actors/protocol/result.hpp"
#include "persistence/learning.hpp"

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
  /// Tokens of its candidates and of its failed proposals.
  uint64_t tokens = 0;
  /// Assignments its agents ended without a candidate (proposal_failed).
  uint64_t failed_proposals = 0;
  /// Kernels its agents benchmarked with `./eval` (agent_evaluated).
  uint64_t agent_evaluations = 0;
  /// False once the team was dissolved, split or merged.
  bool active = true;
  /// The event kind that ended it ("team_dissolved", ...), empty if active.
  std::string ended_by;
  /// Agents assigned to it, in order.
  std::vector<agent_assigned> assignments;
  /// Its latest budget, when one was set for it.
  budget_changed budget;
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
  /// Lessons of the learning document, in order.
  std::vector<learning_entry> learnings;
  /// Candidates whose evaluation started but has not finished.
  std::set<std::string> in_flight;
  /// Nodes that joined and were not lost, by name.
  std::map<std::string, node_joined> nodes;
  std::vector<operator_action> operator_actions;
  /// The run's latest budget, when one was set.
  budget_changed budget;
  /// Times the run was resumed, and whether its last event is run_finished.
  uint64_t resumes = 0;
  bool finished = false;
  run_summary last_summary;
  uint64_t last_seq = 0;
};

/// Applies one event to `h`. Fails on an event that does not fit the history
/// (malformed body, result for an unknown candidate, gap in the sequence,
/// unknown team, invalid lesson); `h` is then unchanged.
caf::expected<void> apply(run_history& h, const event& e);

/// Rebuilds a history from a whole log.
caf::expected<run_history> rebuild(const std::vector<event>& events);

/// Makes the summary of a run from its history.
run_summary summarize(const run_history& h, std::string reason);

} // namespace eat
