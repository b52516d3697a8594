// Typed interfaces of eat's actors. Who talks to whom (docs/architecture.md):
//
//   runtime ──run──► supervisor ──start/stop──► team ──propose──► agent
//                       ▲  │                     │ ──evaluate──► device
//        progress/done  └──┼─────────────────────┘ ──append────► store
//                          └──progress──► listener (the CLI's printer)

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/protocol/type_ids.hpp"

namespace eat {

/// Owns every write to the run's store; replies once the write is committed.
/// An event that does not fit the run's history is refused, not logged.
using store_actor = caf::typed_actor<
  /// Appends an event (its seq and time are set by the log); replies the seq.
  caf::replies_to<append_atom, event>::with<uint64_t>,
  /// Appends events and writes files in one transaction; replies the last
  /// seq (0 when there were no events).
  caf::replies_to<commit_atom, std::vector<event>,
                  std::vector<file_write>>::with<uint64_t>,
  /// Replies the bytes of a namespace file (version 0: the latest).
  caf::replies_to<file_atom, std::string, uint64_t>::with<std::string>,
  /// Replies every event with seq >= the given one, oldest first.
  caf::replies_to<read_atom, uint64_t>::with<std::vector<event>>>;

/// Owns one device: evaluates one candidate at a time.
using device_actor = caf::typed_actor<
  /// Compiles, checks and times a candidate with the given seed.
  caf::replies_to<evaluate_atom, task_spec, candidate,
                  uint64_t>::with<eval_result>>;

/// Produces candidates for assignments.
using agent_actor
  = caf::typed_actor<caf::replies_to<propose_atom, assignment>::with<agent_reply>>;

/// Receives progress reports.
using listener_actor
  = caf::typed_actor<caf::reacts_to<progress_atom, team_progress>,
                     /// A decision of the supervisor (a restructuring, a
                     /// lesson) or the device pool's notice of a drained
                     /// device, as lines of text to show.
                     caf::reacts_to<restructure_atom, std::string>>;

/// A team: asks its agents for candidates and sends them to a device.
using team_actor = caf::typed_actor<
  /// Starts (or continues) work.
  caf::reacts_to<start_atom>,
  /// Finishes the evaluation in flight, then reports done and stops.
  caf::reacts_to<stop_atom>,
  /// Changes the team's strategy, parent or budgets from its next
  /// assignment on.
  caf::reacts_to<restructure_atom, team_change>,
  /// Another team of the run submitted this candidate; later assignments
  /// list it in `elsewhere`.
  caf::reacts_to<tried_atom, scored_candidate>,
  /// Replies the team's current progress.
  caf::replies_to<status_atom>::with<team_progress>>;

/// Answers the llm policy's prompts with the model's text (a JSON plan).
using planner_actor
  = caf::typed_actor<caf::replies_to<plan_atom, std::string>::with<std::string>>;

/// The supervisor: spawns and steers teams, ends the run.
using supervisor_actor = caf::typed_actor<
  /// Starts the run; the reply arrives when the run is over.
  caf::replies_to<run_atom>::with<run_summary>,
  /// A team's progress after each evaluation.
  caf::reacts_to<progress_atom, team_progress>,
  /// A team has stopped working (arguments: team id, why).
  caf::reacts_to<done_atom, std::string, std::string>,
  /// Stop the run early (argument: why, e.g. "interrupted by SIGINT").
  caf::reacts_to<stop_atom, std::string>,
  /// A team is about to submit a template configuration (arguments: team
  /// id, the candidate with status pending). Replies false when a team of
  /// the run submitted the same configuration before; otherwise records it,
  /// tells the other teams and replies true.
  caf::replies_to<tried_atom, std::string, scored_candidate>::with<bool>>;

} // namespace eat
