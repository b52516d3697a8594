// Restructuring policies: what the supervisor does with a team on a plateau
// (docs/supervisor.md). A policy looks at a snapshot of the run and the
// team's diagnosis and answers a plan: operations on the team structure, each
// with its reason. The `heuristic` policy is plain code, deterministic for a
// seed; the `llm` policy asks a model for a JSON plan (plan_prompt), which is
// parsed and validated here (parse_plan) before the supervisor applies it;
// an invalid or impossible plan is recorded and the heuristic decides.
// Pure functions on plain values; any thread.

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/plateau.hpp"
#include "actors/protocol/describe.hpp"

namespace eat {

/// One operation on the team structure.
struct team_operation {
  /// "spawn", "dissolve", "split", "merge", "move_agent", "set_strategy",
  /// "set_parent" or "set_weight".
  std::string op;
  /// The teams it acts on: one for dissolve, split and set_*; two or more
  /// for merge; from and to for move_agent; none for spawn.
  std::vector<std::string> teams;
  /// Strategy of a spawned or merged team, or a team's new strategy.
  std::string strategy;
  /// Strategies of the two teams a split makes.
  std::vector<std::string> strategies;
  /// Parent of a spawned team or a team's new parent: "best" (the run's
  /// best kernel), "team:<id>" (that team's best), "baseline", or a
  /// candidate id.
  std::string parent;
  /// Agents of a spawned team.
  uint32_t agents = 0;
  /// The agent a move_agent moves.
  std::string agent;
  /// A team's new share of the budgets, relative to the others (default 1).
  double weight = 0;
  std::string reason;
};
EAT_DESCRIBE(team_operation, op, teams, strategy, strategies, parent, agents,
             agent, weight, reason)

/// What a policy decided.
struct restructure_plan {
  /// "heuristic" or "llm".
  std::string policy;
  std::vector<team_operation> operations;
  std::string rationale;
  /// Why the llm's plan was not used, when the heuristic decided instead.
  std::string fallback;
};
EAT_DESCRIBE(restructure_plan, policy, operations, rationale, fallback)

/// One team as a policy sees it.
struct team_snapshot {
  std::string id;
  std::string strategy;
  std::vector<std::string> agents;
  uint64_t evaluations = 0;
  std::string best_candidate;
  double best_speedup = 0;
  /// Restructurings this team went through.
  uint32_t restructures = 0;
  double weight = 1;
};
EAT_DESCRIBE(team_snapshot, id, strategy, agents, evaluations, best_candidate,
             best_speedup, restructures, weight)

/// The run as a policy sees it.
struct run_snapshot {
  /// Active teams, by id order.
  std::vector<team_snapshot> teams;
  std::string best_candidate;
  std::string best_team;
  double best_speedup = 0;
  uint64_t evaluations = 0;
  uint64_t evaluations_left = 0;
  /// Most teams that may be active at once.
  uint32_t max_teams = 4;
  /// Template families of the task.
  std::vector<std::string> families;
  /// Candidates that passed, by id (valid parents).
  std::vector<std::string> passed_candidates;
  /// Relative gain that counts as improvement.
  double threshold = 0.02;
};

/// The active team `id` of `run`, or nullptr.
const team_snapshot* find_team(const run_snapshot& run, const std::string& id);

/// `x` as a speedup for messages, e.g. "2.35x".
std::string speedup_text(double x);

/// The strategies a team may be given (each may carry ":<family>").
const std::vector<std::string>& known_strategies();

/// The heuristic policy's plan for team `d.team`, on a plateau; never
/// empty.
restructure_plan heuristic_plan(const run_snapshot& run,
                                const plateau_diagnosis& d, uint64_t seed);

/// The prompt of the llm policy: the diagnosis, the learning document, the
/// team structure and the answer's JSON schema.
std::string plan_prompt(const run_snapshot& run, const plateau_diagnosis& d,
                        const std::string& learning);

/// Reads a model's answer: the JSON plan (the first {...} object when the
/// answer holds text around it), checked against the schema and against the
/// run (teams exist and are active, strategies and parents are valid,
/// counts are in range). Fails with error::invalid_plan listing every
/// problem.
caf::expected<restructure_plan> parse_plan(const std::string& answer,
                                           const run_snapshot& run);

/// Checks a plan against the run; returns its problems (empty: valid).
std::vector<std::string> check_plan(const restructure_plan& plan,
                                    const run_snapshot& run);

} // namespace eat
