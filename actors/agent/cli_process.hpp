// Running one coding-agent CLI (Claude Code, Codex, ...) as a child process:
// posix_spawn with an argument array (never a shell), its own process group,
// an explicit environment, the prompt on stdin, stdout and stderr captured
// (bounded), and four ways to stop it early: a wall-clock timeout, an idle
// timeout (no output for N s), the caller's line callback asking to stop
// (e.g. over budget), and the run ending (a flag). Stopping sends SIGTERM to
// the whole group, then SIGKILL after a grace period. Under eat-keeper
// (cli_run_spec::keeper), processes that left the group die too. See
// docs/agent-cli.md.
//
// Plain code, no actors: the cli agent calls run_cli_process from its own
// (detached) thread; the callback runs on that thread too.

#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "devices/subprocess.hpp"

namespace eat {

/// Why a CLI process ended.
enum class cli_end {
  /// It exited (or was killed by a signal) on its own.
  exited,
  /// The wall-clock timeout passed; the group was stopped.
  timed_out,
  /// No output for the idle timeout; the group was stopped.
  idle,
  /// The line callback asked to stop; the group was stopped.
  stopped,
  /// The run is ending (`cli_run_spec::halt`); the group was stopped.
  halted,
};

/// Called with each complete line of stdout (without the newline); returns
/// false to stop the process.
using cli_line_callback = std::function<bool(std::string_view line)>;

/// A path of a CLI's mount namespace and whether it may write there, or
/// whether it is hidden (an empty folder); with a `source`, what is
/// mounted there, writable (eat-keeper's --bind).
struct cli_mount {
  std::string path;
  bool writable = false;
  bool hidden = false;
  std::string source = {};
};

/// What to run and how long to let it run.
struct cli_run_spec {
  /// Program and arguments; argv[0] must be a path (see find_program).
  std::vector<std::string> argv;
  /// The path of eat-keeper (actors/agent/keeper.hpp), which then runs
  /// argv so that nothing it starts outlives it, daemons included; empty:
  /// argv runs directly, and only its process group is stopped.
  std::string keeper;
  /// Whether the keeper runs argv in PID and mount namespaces of its own,
  /// where the kernel allows them (keeper.hpp); false: in the keeper's
  /// group.
  bool namespaces = true;
  /// What argv may write in its mount namespace: each absolute path made
  /// read-only or writable, with what lies under it, in this order, each
  /// over those before (e.g. "/" read-only, then /tmp writable, then the
  /// run directory read-only, then the workspace writable).
  std::vector<cli_mount> mounts;
  /// Working directory of the child.
  std::filesystem::path cwd;
  /// The complete environment of the child, as "NAME=value" strings.
  std::vector<std::string> env;
  /// Written to the child's stdin, which is then closed (empty: /dev/null).
  std::string stdin_data;
  double timeout_s = 1800;
  /// Seconds without any output (stdout or stderr) before stopping it.
  double idle_timeout_s = 300;
  /// Seconds between SIGTERM and SIGKILL.
  double kill_grace_s = 5;
  /// Stdout kept: the last `max_output` bytes.
  size_t max_output = size_t{1} << 20;
  /// Stderr kept: the last `max_errors` bytes.
  size_t max_errors = size_t{64} << 10;
  /// Optional; sees every stdout line as it arrives.
  cli_line_callback on_line;
  /// Optional; once it reads true (the run is ending: SIGINT, SIGTERM,
  /// max_wall_s) the process is stopped within 0.2 s, as on a timeout.
  const std::atomic<bool>* halt = nullptr;
  /// Optional; called with the started process's pid (the keeper's, where
  /// there is one) before its output is read.
  std::function<void(pid_t)> on_start;
};

/// The outcome of run_cli_process.
struct cli_run_result {
  cli_end end = cli_end::exited;
  devices::exit_status status;
  /// The tail of stdout (at most max_output bytes).
  std::string output;
  /// The tail of stderr (at most max_errors bytes).
  std::string errors;
  /// Bytes of stdout dropped from the front to respect max_output.
  size_t dropped = 0;
  /// Whether SIGTERM was not enough and SIGKILL was sent.
  bool killed = false;
  double seconds = 0;
};

/// Resolves `program` to an executable path: as is when it contains '/',
/// else the first match in the colon-separated `path_list`. Fails
/// (error::agent_failed) with "program 'x' not found in PATH".
caf::expected<std::filesystem::path>
find_program(const std::string& program, std::string_view path_list);

/// Builds the child's environment from the current process's: the names in
/// `allow` that are set, each as "NAME=value"; nothing else.
std::vector<std::string> allowed_environment(
  const std::vector<std::string>& allow);

/// Runs `spec` to completion or until stopped; fails only when the process
/// cannot be started (error::agent_failed naming the program).
caf::expected<cli_run_result> run_cli_process(const cli_run_spec& spec);

/// Renders how a run ended for a failure message, e.g. "exited with status
/// 3", "idle: no output for 300 s", "timed out after 1800 s".
std::string describe_end(const cli_run_result& r, const cli_run_spec& spec);

} // namespace eat
