// A session: one process's part of a run. Starts an actor system, spawns the
// store, device, printer and supervisor actors, runs until the supervisor
// reports the end, prints the final report and writes the best kernel.
// SIGINT and SIGTERM stop the run gracefully (the evaluation in flight
// finishes and is logged); a second signal exits at once. Both leave a run
// that `eat resume` continues. Called from the main thread, once per process.

#pragma once

#include <memory>
#include <ostream>

#include "actors/protocol/task.hpp"
#include "persistence/run_writer.hpp"
#include "persistence/store.hpp"
#include "runtime/config.hpp"
#include "runtime/exit_codes.hpp"
#include "runtime/run_dir.hpp"

namespace eat {

/// Everything a session needs; the writer's history holds at least
/// run_started.
struct session_inputs {
  config cfg;
  task_spec task;
  std::shared_ptr<persistence::store> store;
  std::shared_ptr<persistence::run_writer> writer;
};

/// Runs the session to its end; progress and report go to `out`.
exit_code run_session(const run_dir& dir, session_inputs in, std::ostream& out);

} // namespace eat
