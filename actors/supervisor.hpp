// The supervisor: spawns the run's teams, splits the evaluation and token
// budgets among them, forwards their progress to the listener, stops them at
// the wall-clock limit or on request, and ends the run with a summary that it
// logs as run_finished. On resume it rebuilds the teams from the history.
//
//   idle ──run──► spawning (log team_spawned, agent_assigned, notes.md)
//                   ──► running ⟲ progress
//                          │ every team done
//                          ▼
//          finished (log lessons (learning_added) and run_finished, reply)
//
// While running, a team on a plateau (actors/plateau.hpp) is restructured:
// the supervisor logs team_restructured with its diagnosis and reason, then
// switches the team's strategy ("local" <-> "explore") without stopping it.
//
// Spawning, splitting, merging and dissolving teams on a plateau, and the
// llm policy, come with the supervisor issue.

#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/agent/builtin_agent.hpp"
#include "actors/plateau.hpp"
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
  /// Tokens for the whole run; 0 for no limit.
  uint64_t token_budget = 0;
  /// When a team counts as stuck and gets restructured.
  plateau_options plateau;
};

/// The actors a supervisor works with.
struct supervisor_links {
  store_actor store;
  std::vector<device_actor> devices;
  /// Identity of each device, in the same order.
  std::vector<std::string> device_names;
  listener_actor listener;
};

struct supervisor_state {
  supervisor_options opts;
  supervisor_links links;
  run_history history;
  run_summary summary;
  std::map<std::string, team_actor> teams;
  /// Every agent spawned, so that they can be shut down with the run.
  std::vector<agent_actor> agents;
  std::set<std::string> active;
  std::vector<std::string> team_reasons;
  /// Every evaluated candidate of the run, for the lessons at its end.
  std::vector<scored_candidate> scored;
  /// Plateau detection per team, and each team's current strategy.
  std::map<std::string, plateau_tracker> trackers;
  std::map<std::string, std::string> strategies;
  /// Teams whose restructuring is being logged.
  std::set<std::string> restructuring;
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
