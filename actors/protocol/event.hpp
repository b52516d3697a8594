// Events of the evolution history: the append-only log in the store from
// which a run's state is rebuilt (persistence/event_log.hpp keeps them,
// docs/store-layout.md describes them).
//
// An event is an envelope: a sequence number and time set by the log, a kind,
// and a body holding the MessagePack encoding of the kind's struct:
//
//   run_started          -> run_started
//   team_spawned         -> team_spawned
//   candidate_submitted  -> candidate
//   evaluation_finished  -> eval_result
//   run_finished         -> run_summary
//   run_resumed          -> run_resumed

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/describe.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// What an event records.
enum class event_kind : uint8_t {
  /// A run began (body: run_started).
  run_started,
  /// The supervisor created a team (body: team_spawned).
  team_spawned,
  /// A team sent a candidate to a device (body: candidate).
  candidate_submitted,
  /// A device finished evaluating a candidate (body: eval_result).
  evaluation_finished,
  /// The run ended (body: run_summary).
  run_finished,
  /// A run was continued after a stop or crash (body: run_resumed).
  run_resumed,
};
EAT_WIRE_ENUM(event_kind, run_resumed)

/// Returns the kind's name, e.g. "candidate_submitted".
std::string to_string(event_kind x);

/// One record of the log.
struct event {
  /// Gap-free sequence number, starting at 1; set by the log on append.
  uint64_t seq = 0;
  /// Wall-clock time of the append, milliseconds since the Unix epoch.
  int64_t unix_ms = 0;
  event_kind kind = event_kind::run_started;
  /// MessagePack encoding of the kind's struct.
  std::string body;
};
EAT_DESCRIBE(event, seq, unix_ms, kind, body)

/// Body of event_kind::run_started.
struct run_started {
  std::string run_id;
  std::string task;
  uint64_t seed = 0;
  uint64_t max_evaluations = 0;
  /// The configuration the run was started with (TOML text).
  std::string config_toml;
  /// Absolute path of that configuration file when the run started; relative
  /// paths in it resolve against its folder.
  std::string config_path;
  /// The task as loaded at the start; a resumed run uses exactly this.
  task_spec spec;
};
EAT_DESCRIBE(run_started, run_id, task, seed, max_evaluations, config_toml,
             config_path, spec)

/// Body of event_kind::team_spawned.
struct team_spawned {
  std::string team;
  std::string strategy;
  std::vector<std::string> agents;
  /// Candidate the team starts from; empty for the task's baseline.
  std::string parent;
  /// Why the supervisor spawned it.
  std::string reason;
};
EAT_DESCRIBE(team_spawned, team, strategy, agents, parent, reason)

/// Body of event_kind::run_resumed.
struct run_resumed {
  /// Last sequence number found in the log when resuming.
  uint64_t last_seq = 0;
  /// Candidates submitted before the stop but never evaluated.
  uint64_t unfinished = 0;
};
EAT_DESCRIBE(run_resumed, last_seq, unfinished)

} // namespace eat
