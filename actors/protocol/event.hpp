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
//   evaluation_started   -> evaluation_started
//   team_dissolved       -> team_dissolved
//   team_split           -> team_split
//   team_merged          -> team_merged
//   team_restructured    -> team_restructured
//   agent_assigned       -> agent_assigned
//   budget_changed       -> budget_changed
//   learning_added       -> learning_entry (persistence/learning.hpp)
//   node_joined          -> node_joined
//   node_lost            -> node_lost
//   operator_action      -> operator_action
//   proposal_failed      -> proposal_failed
//   agent_evaluated      -> agent_evaluated
//
// Codes are stable: new kinds are added at the end.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/describe.hpp"
#include "actors/protocol/result.hpp"
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
  /// A device began evaluating a candidate (body: evaluation_started).
  evaluation_started,
  /// The supervisor ended a team (body: team_dissolved).
  team_dissolved,
  /// The supervisor split a team into new ones (body: team_split).
  team_split,
  /// The supervisor merged teams into a new one (body: team_merged).
  team_merged,
  /// The supervisor changed a team's strategy, members, parent or budget
  /// (body: team_restructured).
  team_restructured,
  /// An agent joined a team in a role (body: agent_assigned).
  agent_assigned,
  /// A budget of the run or of a team changed (body: budget_changed).
  budget_changed,
  /// A lesson was added to the learning document (body: learning_entry).
  learning_added,
  /// A node joined the cluster (body: node_joined).
  node_joined,
  /// A node was lost (body: node_lost).
  node_lost,
  /// A person acted on the run through the control plane (body:
  /// operator_action).
  operator_action,
  /// An agent's assignment ended without a candidate (body:
  /// proposal_failed).
  proposal_failed,
  /// An agent benchmarked a kernel for itself with `./eval` (body:
  /// agent_evaluated).
  agent_evaluated,
};
EAT_WIRE_ENUM(event_kind, agent_evaluated)

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

/// Body of event_kind::evaluation_started.
struct evaluation_started {
  std::string candidate;
  /// Device identity, as in eval_result::device.
  std::string device;
};
EAT_DESCRIBE(evaluation_started, candidate, device)

/// Body of event_kind::team_dissolved.
struct team_dissolved {
  std::string team;
  /// The supervisor's diagnosis that led to it (text or JSON).
  std::string diagnosis;
  std::string reason;
};
EAT_DESCRIBE(team_dissolved, team, diagnosis, reason)

/// Body of event_kind::team_split: `team` ends; the new teams are logged
/// with team_spawned.
struct team_split {
  std::string team;
  std::vector<std::string> into;
  std::string diagnosis;
  std::string reason;
};
EAT_DESCRIBE(team_split, team, into, diagnosis, reason)

/// Body of event_kind::team_merged: `teams` end; `into` is logged with
/// team_spawned.
struct team_merged {
  std::vector<std::string> teams;
  std::string into;
  std::string diagnosis;
  std::string reason;
};
EAT_DESCRIBE(team_merged, teams, into, diagnosis, reason)

/// Body of event_kind::team_restructured. Empty fields are unchanged.
struct team_restructured {
  std::string team;
  std::string strategy;
  std::vector<std::string> agents;
  std::string parent;
  std::string diagnosis;
  std::string reason;
};
EAT_DESCRIBE(team_restructured, team, strategy, agents, parent, diagnosis,
             reason)

/// Body of event_kind::agent_assigned.
struct agent_assigned {
  std::string team;
  std::string agent;
  std::string role;
  /// Agent backend, e.g. "builtin".
  std::string backend;
};
EAT_DESCRIBE(agent_assigned, team, agent, role, backend)

/// Body of event_kind::budget_changed.
struct budget_changed {
  /// "run" or a team id.
  std::string scope;
  uint64_t evaluations = 0;
  uint64_t tokens = 0;
  std::string reason;
};
EAT_DESCRIBE(budget_changed, scope, evaluations, tokens, reason)

/// Body of event_kind::node_joined.
struct node_joined {
  std::string node;
  std::string address;
  /// Device identities the node offers.
  std::vector<std::string> devices;
  uint32_t agent_slots = 0;
};
EAT_DESCRIBE(node_joined, node, address, devices, agent_slots)

/// Body of event_kind::node_lost.
struct node_lost {
  std::string node;
  std::string reason;
};
EAT_DESCRIBE(node_lost, node, reason)

/// Body of event_kind::operator_action.
struct operator_action {
  /// Who acted (user name or client id).
  std::string who;
  /// What was done, e.g. "stop", "set-budget".
  std::string action;
  std::string detail;
};
EAT_DESCRIBE(operator_action, who, action, detail)

/// Body of event_kind::proposal_failed.
struct proposal_failed {
  std::string team;
  std::string agent;
  /// Why, as the agent said: "claude exited with status 1 ...", "timed
  /// out after 1800 s", "no kernel.cpp in the workspace", "over token
  /// budget ..." (at most 4 KiB of it).
  std::string failure;
  /// Tokens the attempt spent: they count in the team's and the run's.
  uint64_t tokens = 0;
  token_usage usage;
};
EAT_DESCRIBE(proposal_failed, team, agent, failure, tokens, usage)

/// Body of event_kind::agent_evaluated: a kernel that an agent benchmarked
/// on a device with `./eval` while it worked (docs/agent-cli.md). It is no
/// candidate of the run: it counts in no evaluation budget and cannot
/// become the best. Its source, report and build log are in
/// /teams/<team>/evals/<result.candidate>/.
struct agent_evaluated {
  std::string team;
  std::string agent;
  /// The device's answer; result.candidate is "<team>-<agent>-<n>-eval<k>"
  /// and the build log is left out (it is in the files).
  eval_result result;
};
EAT_DESCRIBE(agent_evaluated, team, agent, result)

} // namespace eat
