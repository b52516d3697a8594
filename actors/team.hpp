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
// The supervisor may change the strategy, the parent and the budgets of a
// running team (restructure); the change applies from the next assignment.
// Before submitting a template configuration, a team announces it to the
// supervisor (tried), which refuses one that another team submitted first
// (the team then asks its agents again) and tells the other teams of the
// rest, so that every team's agents see the whole run's tried
// configurations (assignment::elsewhere) and none is evaluated twice.
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
#include <functional>
#include <map>
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
  /// The lineage: the candidate the team starts from (empty id: the task's
  /// baseline). Agents improve on the better of it and the team's own best.
  scored_candidate parent;
  /// The agents' names, in order (default: "<id>.a1", "<id>.a2", ...).
  std::vector<std::string> agent_names;
  /// Candidates the run's other teams submitted before this team started;
  /// the supervisor sends later ones with `tried` as they are submitted.
  std::vector<scored_candidate> elsewhere;
};

/// The actors a team works with.
struct team_links {
  /// Agents given ready-made, in the order of opts.agent_names.
  std::vector<agent_actor> agents;
  /// Makes an agent by name; when set, the team makes its agents itself
  /// (and new ones when a restructuring moves agents in) and links them to
  /// itself, so that a crashed agent takes the team down for a restart.
  std::function<agent_actor(const std::string&)> make_agent;
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
  /// The evaluation count (progress.evaluated) at which the team stops.
  uint64_t limit = 0;
  size_t next_agent = 0;
  /// Agents the team made itself (links.make_agent), by name.
  std::map<std::string, agent_actor> agent_by_name;
  /// Proposals in a row that another team had submitted first.
  uint32_t collisions_in_row = 0;
  /// Assignments in a row that ended without a candidate.
  uint32_t failed_in_row = 0;
  bool stopping = false;
  bool started = false;
  static inline const char* name = "eat.team";
};

using team_pointer = team_actor::stateful_pointer<team_state>;

/// Behaviour of a team; `past` is the team's history from the log.
team_actor::behavior_type team(team_pointer self, team_options opts,
                               team_links links, team_history past);

/// Proposals in a row that may collide with other teams' candidates before
/// the team submits one anyway (an agent that ignores `elsewhere`).
constexpr uint32_t max_collisions_in_row = 3;

/// Assignments in a row that may end without a candidate (an agent's
/// program failed, timed out or wrote no kernel; each is logged as
/// proposal_failed) before the team is done: a transient failure, such as
/// an API overloaded beyond the agent's own retries, no longer ends it.
constexpr uint32_t max_failed_in_row = 3;

/// Start of the reason a team reports done with when one of its agents
/// crashed (followed by the agent's name); the supervisor restarts it.
constexpr const char* crashed_agent_prefix = "agent crashed: ";

/// The splitmix64 finaliser: mixes the bits of `x` (seeds of teams,
/// assignments, evaluations and plans derive from the run seed with it).
uint64_t mix_seed(uint64_t x);

/// Seed of the evaluation of candidate `id` in a run seeded with `run_seed`.
uint64_t evaluation_seed(uint64_t run_seed, const std::string& id);

/// Id of a team's n-th candidate (1-based), e.g. "t1-c0007".
std::string candidate_id(const std::string& team, uint64_t n);

} // namespace eat
