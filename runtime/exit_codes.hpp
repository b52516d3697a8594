// Exit codes of the `eat` program (docs/cli.md lists them for users).

#pragma once

#include "actors/protocol/error.hpp"

namespace eat {

/// What `eat` returns to the shell.
enum class exit_code : int {
  /// The command did what was asked.
  ok = 0,
  /// The run failed at run time (store write, device set-up, agents).
  failed = 1,
  /// The command line was wrong (unknown subcommand, flag or argument).
  usage = 2,
  /// The configuration or a task file is invalid.
  invalid_input = 3,
  /// The run directory or its store is missing, in use, or unreadable.
  bad_run_dir = 4,
  /// `eat fsck` found the store inconsistent.
  inconsistent = 5,
  /// The run was interrupted (SIGINT/SIGTERM); `eat resume` continues it.
  interrupted = 130,
};

/// Maps an error to the exit code that reports it.
inline exit_code exit_code_for(const caf::error& err) {
  switch (code_of(err)) {
    case error::invalid_arguments: return exit_code::usage;
    case error::invalid_config:
    case error::invalid_task: return exit_code::invalid_input;
    case error::invalid_run_dir:
    case error::store_failure:
    case error::store_version_mismatch: return exit_code::bad_run_dir;
    default: return exit_code::failed;
  }
}

} // namespace eat
