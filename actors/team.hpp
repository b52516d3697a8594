// A team: a group of agents sharing a strategy and a lineage. It asks its
// agents for candidates in turn, logs each candidate in the store before
// sending it to its device, logs each result, keeps its best, and reports
// progress to the supervisor after every evaluation. It stops when its
// evaluation budget is spent, when its agents run out of ideas, or on stop.
//
//   idle ──start──► working ⟲ (propose → submit → evaluate → record)
//                     │ budget spent / stop / agent exhausted / error
//                     ▼
//                   done (reports done to the supervisor, quits)
//
// After a resume, candidates that were submitted but never evaluated are
// evaluated first, without being proposed or logged again.
//
// Per evaluation it logs candidate_submitted, evaluation_started, then
// evaluation_finished together with the candidate's files (kernel.cpp,
// result.md, build.log, and best_kernel.cpp when it is the team's new best;
// actors/artifacts.hpp) in one commit.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/interfaces.hpp"
#include "persistence/run_history.hpp"

namespace eat {

/// What a team is and may spend.
struct team_options {
  std::string id;
  std::string strategy;
  task_spec task;
  /// The run's seed; candidate seeds and assignment seeds derive from it.
  uint64_t run_seed = 0;
  /// Evaluations this team may still finish.
  uint64_t evaluation_budget = 0;
  /// Tokens this team may still spend.
  uint64_t token_budget = 0;
  /// Identity of the team's device, for evaluation_started events.
  std::string device_name;
};

/// The actors a team works with.
struct team_links {
  std::vector<agent_actor> agents;
  device_actor device;
  store_actor store;
  supervisor_actor supervisor;
};

struct team_state {
  team_options opts;
  team_links links;
  /// Everything this team did, in this and earlier processes.
  team_history history;
  team_progress progress;
  uint64_t finished_here = 0;
  size_t next_agent = 0;
  bool stopping = false;
  bool started = false;
  static inline const char* name = "eat.team";
};

using team_pointer = team_actor::stateful_pointer<team_state>;

/// Behaviour of a team; `past` is the team's history from the log.
team_actor::behavior_type team(team_pointer self, team_options opts,
                               team_links links, team_history past);

/// Seed of the evaluation of candidate `id` in a run seeded with `run_seed`.
uint64_t evaluation_seed(uint64_t run_seed, const std::string& id);

/// Id of a team's n-th candidate (1-based), e.g. "t1-c0007".
std::string candidate_id(const std::string& team, uint64_t n);

} // namespace eat
