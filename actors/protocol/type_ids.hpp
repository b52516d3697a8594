// The one CAF type-ID block of eat: every message type and atom. Load it in
// each actor system with `cfg.add_message_types<caf::id_block::eat>()`
// (runtime/actor_system_setup.hpp does, together with the error category).
// A type missing here fails silently at run time when serialised (see
// NOTES-LIBRARIES.md), so tests/actors/protocol/type_ids_test.cpp checks
// that every described struct is registered.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/type_id.hpp>

#include "actors/protocol/assignment.hpp"
#include "actors/protocol/candidate.hpp"
#include "actors/protocol/event.hpp"
#include "actors/protocol/file_write.hpp"
#include "actors/protocol/prepared.hpp"
#include "actors/protocol/progress.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"

CAF_BEGIN_TYPE_ID_BLOCK(eat, caf::first_custom_type_id)

  CAF_ADD_TYPE_ID(eat, (eat::workload))
  CAF_ADD_TYPE_ID(eat, (eat::param_space))
  CAF_ADD_TYPE_ID(eat, (eat::template_family))
  CAF_ADD_TYPE_ID(eat, (eat::task_spec))
  CAF_ADD_TYPE_ID(eat, (eat::candidate))
  CAF_ADD_TYPE_ID(eat, (eat::scored_candidate))
  CAF_ADD_TYPE_ID(eat, (eat::eval_status))
  CAF_ADD_TYPE_ID(eat, (eat::workload_result))
  CAF_ADD_TYPE_ID(eat, (eat::eval_result))
  CAF_ADD_TYPE_ID(eat, (eat::assignment))
  CAF_ADD_TYPE_ID(eat, (eat::agent_reply))
  CAF_ADD_TYPE_ID(eat, (eat::team_progress))
  CAF_ADD_TYPE_ID(eat, (eat::run_summary))
  CAF_ADD_TYPE_ID(eat, (eat::event_kind))
  CAF_ADD_TYPE_ID(eat, (eat::event))
  CAF_ADD_TYPE_ID(eat, (std::vector<eat::event>))
  CAF_ADD_TYPE_ID(eat, (eat::run_started))
  CAF_ADD_TYPE_ID(eat, (eat::team_spawned))
  CAF_ADD_TYPE_ID(eat, (eat::run_resumed))
  CAF_ADD_TYPE_ID(eat, (eat::file_write))
  CAF_ADD_TYPE_ID(eat, (std::vector<eat::file_write>))
  CAF_ADD_TYPE_ID(eat, (eat::token_usage))
  CAF_ADD_TYPE_ID(eat, (eat::device_load))
  CAF_ADD_TYPE_ID(eat, (eat::pool_status))
  CAF_ADD_TYPE_ID(eat, (eat::prepared_objects))
  CAF_ADD_TYPE_ID(eat, (eat::team_change))

  CAF_ADD_ATOM(eat, eat, append_atom, "append")
  CAF_ADD_ATOM(eat, eat, read_atom, "read")
  CAF_ADD_ATOM(eat, eat, evaluate_atom, "evaluate")
  CAF_ADD_ATOM(eat, eat, compile_atom, "compile")
  CAF_ADD_ATOM(eat, eat, propose_atom, "propose")
  CAF_ADD_ATOM(eat, eat, start_atom, "start")
  CAF_ADD_ATOM(eat, eat, stop_atom, "stop")
  CAF_ADD_ATOM(eat, eat, status_atom, "status")
  CAF_ADD_ATOM(eat, eat, run_atom, "run")
  CAF_ADD_ATOM(eat, eat, progress_atom, "progress")
  CAF_ADD_ATOM(eat, eat, done_atom, "done")
  CAF_ADD_ATOM(eat, eat, commit_atom, "commit")
  CAF_ADD_ATOM(eat, eat, file_atom, "file")
  CAF_ADD_ATOM(eat, eat, restructure_atom, "restruct")
  CAF_ADD_ATOM(eat, eat, weight_atom, "weight")
  CAF_ADD_ATOM(eat, eat, health_atom, "health")
  CAF_ADD_ATOM(eat, eat, plan_atom, "plan")
  CAF_ADD_ATOM(eat, eat, tried_atom, "tried")

CAF_END_TYPE_ID_BLOCK(eat)
