// Progress reports: from teams to the supervisor, and from the supervisor to
// whoever watches the run (the CLI prints them).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/describe.hpp"
#include "actors/protocol/result.hpp"

namespace eat {

/// A team's state after one more evaluation.
struct team_progress {
  std::string team;
  /// Evaluations finished by this team, in total and passed.
  uint64_t evaluated = 0;
  uint64_t passed = 0;
  uint64_t tokens = 0;
  std::string best_candidate;
  double best_speedup = 0;
  /// The evaluation that triggered this report.
  candidate last_candidate;
  eval_result last_result;
};
EAT_DESCRIBE(team_progress, team, evaluated, passed, tokens, best_candidate,
             best_speedup, last_candidate, last_result)

/// How a run ended, and its best kernel.
struct run_summary {
  std::string run_id;
  /// Why it stopped, e.g. "max_evaluations reached".
  std::string reason;
  uint64_t evaluations = 0;
  uint64_t passed = 0;
  uint64_t tokens = 0;
  std::string best_candidate;
  std::string best_team;
  double best_speedup = 0;
  /// Per-workload results of the best candidate.
  std::vector<workload_result> best_workloads;
  /// The best kernel's parameters and source.
  std::string best_family;
  param_map best_params;
  std::string best_source;
};
EAT_DESCRIBE(run_summary, run_id, reason, evaluations, passed, tokens,
             best_candidate, best_team, best_speedup, best_workloads,
             best_family, best_params, best_source)

} // namespace eat
