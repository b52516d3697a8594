// Progress reports: from teams to the supervisor, and from the supervisor to
// whoever watches the run (the CLI prints them).

#pragma once

#include <cstdint>
#include <map>
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
  /// The evaluation that triggered this report. Without a candidate (its
  /// id empty) the report is of an assignment that ended without one: its
  /// tokens count, and last_result.detail says what happened.
  candidate last_candidate;
  eval_result last_result;
};
EAT_DESCRIBE(team_progress, team, evaluated, passed, tokens, best_candidate,
             best_speedup, last_candidate, last_result)

/// A change the supervisor makes to a running team (docs/supervisor.md).
/// Empty strings and zero budgets leave the field unchanged.
struct team_change {
  std::string strategy;
  /// The candidate to improve on from now on (its id is empty: unchanged).
  scored_candidate parent;
  /// The team's evaluation count (all processes) at which it stops: its
  /// new limit; 0 leaves the limit unchanged.
  uint64_t evaluations = 0;
  /// Tokens the team may still spend from now on; 0 leaves it unchanged.
  uint64_t tokens = 0;
  /// The team's agents by name from now on; empty leaves them unchanged.
  std::vector<std::string> agents;
};
EAT_DESCRIBE(team_change, strategy, parent, evaluations, tokens, agents)

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

/// One device's load, as its pool reports it.
struct device_load {
  /// Device id, e.g. "cpu0".
  std::string device;
  /// Backend kind, e.g. "cpu".
  std::string kind;
  /// Evaluations finished (timed stage done) on this device.
  uint64_t evaluations = 0;
  /// Seconds spent in timed stages, and from the device's first slice to
  /// its last answer (or now while busy): busy_s / wall_s is utilisation.
  double busy_s = 0;
  double wall_s = 0;
  /// Health checks failed in a row.
  uint32_t failed_checks = 0;
  /// True once drained: it takes no more work.
  bool drained = false;
  /// Why it was drained ("" when not).
  std::string why;
};
EAT_DESCRIBE(device_load, device, kind, evaluations, busy_s, wall_s,
             failed_checks, drained, why)

/// A device pool's queues and devices.
struct pool_status {
  /// Jobs waiting (compiling or compiled) per team.
  std::map<std::string, uint64_t> queued;
  /// Re-verifications waiting.
  uint64_t reverifications = 0;
  std::vector<device_load> devices;
};
EAT_DESCRIBE(pool_status, queued, reverifications, devices)

} // namespace eat
