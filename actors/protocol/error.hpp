// The error codes of eat. Every failure that crosses an actor boundary is a
// caf::error of category "eat" built from this enum; plain code (persistence/,
// devices/, runtime/) returns caf::expected<T> carrying the same errors.
//
// Build one with `make_error(error::x, "what happened")`; the text travels as
// the error's context and is printed by `render(err)`.

#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace eat {

enum class error : uint8_t {
  /// Not an error (CAF reserves code 0 for "no error").
  none = 0,
  /// A configuration file is missing, unreadable, or has a bad key or value.
  invalid_config,
  /// A task folder or task file is missing or malformed.
  invalid_task,
  /// A command line has an unknown subcommand, flag or argument.
  invalid_arguments,
  /// A message or record could not be decoded (MessagePack schema mismatch).
  malformed_message,
  /// The persistent store could not be opened, read or written.
  store_failure,
  /// The store was written by another schema version, or is not an eat store.
  store_version_mismatch,
  /// A run directory is missing, incomplete or already in use.
  invalid_run_dir,
  /// Compiling a candidate failed or timed out.
  compile_failed,
  /// The sandboxed runner could not be started or did not report.
  runner_failed,
  /// A device is not available on this machine.
  device_unavailable,
  /// An agent could not produce a candidate.
  agent_failed,
  /// The run was stopped before it finished.
  run_stopped,
  /// A file system operation (outside the store) failed.
  io_failure,
  /// A restructuring plan (from the llm policy) is malformed or impossible.
  invalid_plan,
};

/// The error category of eat's errors.
constexpr caf::atom_value error_category_atom = caf::atom("eat");

/// Returns the enumerator's name, e.g. "invalid_config".
std::string to_string(error x);

/// Builds an error of category "eat" without context.
caf::error make_error(error code);

/// Builds an error of category "eat" whose context is `what`.
caf::error make_error(error code, std::string what);

/// Renders an eat error as "code: what"; other errors with CAF's to_string.
std::string render(const caf::error& err);

/// Returns the eat code of `err`, or error::none when it is not an eat error.
error code_of(const caf::error& err);

} // namespace eat
