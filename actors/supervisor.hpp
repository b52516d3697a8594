// The supervisor: spawns the run's teams, splits the evaluation and token
// budgets among them, forwards their progress to the listener, restructures
// teams on plateaus, restarts crashed teams, stops them at the wall-clock
// limit, a target or on request, and ends the run with a summary that it logs
// as run_finished. On resume it rebuilds the teams from the history.
//
//   idle ──run──► spawning (log team_spawned, agent_assigned, notes.md)
//                   ──► running ⟲ progress
//                          │ every team done
//                          ▼
//          finished (log lessons (learning_added) and run_finished, reply)
//
// While running, a team on a plateau (actors/plateau.hpp), or the whole run
// on one, is diagnosed and handed to the policy (actors/policy.hpp), whose
// plan (spawn, dissolve, split, merge, move an agent, change a strategy,
// parent or weight) is logged in one commit, with the diagnosis and the
// reason of each operation, before it is carried out; the budgets left are
// then re-split among the active teams (budget_changed). docs/supervisor.md
// describes the policies and the events.

#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/agent/builtin_agent.hpp"
#include "actors/plateau.hpp"
#include "actors/policy.hpp"
#include "actors/protocol/interfaces.hpp"
#include "persistence/run_history.hpp"

namespace eat {

/// What the run is and may spend.
struct supervisor_options {
  task_spec task;
  uint64_t seed = 0;
  uint64_t max_evaluations = 0;
  /// Wall-clock limit of this process's part of the run; 0 for none.
  double max_wall_s = 0;
  /// Stop once the best geomean speedup reaches this; 0 for none.
  double target_speedup = 0;
  /// Stop once the best kernel reaches this fraction of the speed of light
  /// on every workload; 0 for none.
  double target_sol_fraction = 0;
  uint32_t teams = 1;
  uint32_t agents_per_team = 1;
  std::string strategy = "local";
  builtin_agent_options agent;
  /// The agents' backend and role, for agent_assigned events.
  std::string agent_backend = "builtin";
  std::string agent_role = "tuner";
  /// Tokens for the whole run; 0 for no limit.
  uint64_t token_budget = 0;
  /// When a team counts as stuck.
  plateau_options plateau;
  /// Restructure on plateaus ("eat" mode); flat and single modes do not.
  bool restructure = true;
  /// "heuristic", or "llm" (needs a planner in the links).
  std::string policy = "heuristic";
  /// Most teams active at once.
  uint32_t max_teams = 4;
  /// Restarts of a crashed team before it is retired.
  uint32_t max_restarts = 3;
  /// Set when the run stops or finishes, so that agents working outside
  /// the actors (the cli agents' programs) stop too (cli_agent_options).
  std::shared_ptr<std::atomic<bool>> halt;
  /// Seconds the llm planner may take before the heuristic decides.
  double plan_timeout_s = 120;
};

/// Makes the agent actor `name` (e.g. "t1.a2") of team `team`.
using agent_factory = std::function<agent_actor(
  caf::actor_system&, const std::string& team, const std::string& name)>;

/// The actors a supervisor works with.
struct supervisor_links {
  store_actor store;
  std::vector<device_actor> devices;
  /// Identity of each device, in the same order.
  std::vector<std::string> device_names;
  listener_actor listener;
  /// Makes agents; empty: builtin agents with the options' settings.
  agent_factory make_agent;
  /// Answers the llm policy's prompts; null: the heuristic decides.
  planner_actor planner;
  /// Tells the devices a team's share (its budget weight); may be empty.
  std::function<void(const std::string&, double)> set_weight;
};

/// The supervisor's view of one team.
struct team_record {
  std::string strategy;
  std::vector<std::string> agents;
  /// The lineage it was given (empty id: the baseline).
  scored_candidate parent;
  scored_candidate best;
  /// Evaluations finished (all processes), and the count it stops at.
  uint64_t evaluated = 0;
  uint64_t limit = 0;
  uint64_t tokens = 0;
  /// Tokens (all processes) it may spend in total; 0 when the run has no
  /// token budget.
  uint64_t token_limit = 0;
  /// Share of the budgets relative to the other teams.
  double weight = 1;
  uint32_t restructures = 0;
  uint32_t restarts = 0;
  /// Ended by a plan (dissolved, split, merged): finishing its evaluation in
  /// flight, then gone.
  bool ending = false;
  /// Which device it uses.
  size_t device = 0;
};

/// A restructuring whose effect is still to be judged (for the learning
/// document).
struct pending_outcome {
  std::string what;
  double best_before = 0;
  uint64_t evaluations_at = 0;
};

struct supervisor_state {
  supervisor_options opts;
  supervisor_links links;
  run_history history;
  run_summary summary;
  std::map<std::string, team_actor> teams;
  std::map<std::string, team_record> records;
  /// Teams launched and not yet done (including ending ones).
  std::set<std::string> active;
  std::vector<std::string> team_reasons;
  /// Every evaluated candidate of the run, for the lessons at its end.
  std::vector<scored_candidate> scored;
  /// Every submitted candidate of the run, as its team announced it (status
  /// pending) or as the log has it: what each team's `elsewhere` holds.
  std::vector<scored_candidate> tried;
  /// Plateau detection per team, and for the whole run.
  std::map<std::string, plateau_tracker> trackers;
  plateau_tracker run_tracker;
  /// Teams (or "run") whose restructuring is being decided or logged.
  std::set<std::string> restructuring;
  /// Restructurings to judge, by the team they concern.
  std::map<std::string, pending_outcome> outcomes;
  /// The learning document's entries so far (the history's and new ones).
  std::vector<learning_entry> learnings;
  /// Number of the next team id ("t<N>").
  uint32_t next_team = 1;
  uint64_t plans = 0;
  std::string stop_reason;
  bool finishing = false;
  caf::typed_response_promise<run_summary> promise;
  static inline const char* name = "eat.supervisor";
};

using supervisor_pointer = supervisor_actor::stateful_pointer<supervisor_state>;

/// Behaviour of the supervisor; `history` is the run's log so far (it holds
/// at least the run_started event).
supervisor_actor::behavior_type supervisor(supervisor_pointer self,
                                           supervisor_options opts,
                                           supervisor_links links,
                                           run_history history);

} // namespace eat
