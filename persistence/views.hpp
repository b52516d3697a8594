// Materialised views of a run's state, kept in the store's "views" database
// in step with the event log (written in the same transaction as each
// event), so that `eat status` and other readers need not replay the log.
//
// Records (key -> MessagePack):
//   "run"              -> run_view
//   "team/<id>"        -> team_view
//   "candidate/<id>"   -> candidate_view
//
// Every record is computed from a run_history by one function, so the views
// written event by event equal those of a full rebuild; `eat fsck` checks
// that they do. Pure functions plus two store helpers; any thread.

#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <caf/expected.hpp>

#include "actors/protocol/describe.hpp"
#include "actors/protocol/result.hpp"
#include "persistence/run_history.hpp"
#include "persistence/store.hpp"

namespace eat {

/// The whole run at a glance.
struct run_view {
  std::string run_id;
  std::string task;
  uint64_t seed = 0;
  uint64_t max_evaluations = 0;
  uint64_t last_seq = 0;
  uint64_t evaluations = 0;
  uint64_t passed = 0;
  uint64_t tokens = 0;
  uint64_t teams = 0;
  uint64_t active_teams = 0;
  uint64_t learnings = 0;
  uint64_t resumes = 0;
  std::string best_candidate;
  double best_speedup = 0;
  bool finished = false;
  /// Why the run stopped, when `finished`.
  std::string stop_reason;
};
EAT_DESCRIBE(run_view, run_id, task, seed, max_evaluations, last_seq,
             evaluations, passed, tokens, teams, active_teams, learnings,
             resumes, best_candidate, best_speedup, finished, stop_reason)

/// One team.
struct team_view {
  std::string team;
  std::string strategy;
  bool active = true;
  uint64_t submitted = 0;
  uint64_t evaluated = 0;
  uint64_t passed = 0;
  uint64_t tokens = 0;
  std::string best_candidate;
  double best_speedup = 0;
  /// Kernels its agents benchmarked with `./eval` (not candidates).
  uint64_t agent_evaluations = 0;
};
EAT_DESCRIBE(team_view, team, strategy, active, submitted, evaluated, passed,
  tokens, best_candidate, best_speedup, agent_evaluations)
EAT_DESCRIBE_OPTIONAL(team_view, agent_evaluations)

/// One candidate.
struct candidate_view {
  std::string id;
  std::string team;
  std::string family;
  eval_status status = eval_status::pending;
  double speedup = 0;
};
EAT_DESCRIBE(candidate_view, id, team, family, status, speedup)

/// View records by key, values encoded.
using view_records = std::map<std::string, std::string>;

/// Every view record of `h`.
view_records all_views(const run_history& h);

/// The records that event `e`, already applied to `h`, changed.
view_records changed_views(const run_history& h, const event& e);

namespace persistence {

/// Writes `records` in the caller's write transaction.
caf::expected<void> put_views(txn& t, const store& s,
                              const view_records& records);

/// Reads every view record of the store.
caf::expected<view_records> read_views(const store& s);

} // namespace persistence

} // namespace eat
