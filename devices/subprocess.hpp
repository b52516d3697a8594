// Child processes for the CPU device: the compiler and the sandboxed runner.
// Each child is started with posix_spawn (no shell, argv array) in a session
// and process group of its own, without a controlling terminal, so that
// killing the group also kills whatever it started. The
// parent waits on a pidfd, which lets it poll for "exited" together with the
// child's pipes and a deadline.
//
// A child_process is owned by the code that spawned it and used from that one
// thread; destroying it kills and reaps the whole group, so no child outlives
// an evaluation.

#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include <caf/expected.hpp>

#include "devices/landlock.hpp"
#include "devices/unique_fd.hpp"

namespace eat::devices {

using steady_time = std::chrono::steady_clock::time_point;

/// What to start and how to wire it up.
struct process_spec {
  /// Program and arguments; argv[0] is looked up in PATH if it has no '/'.
  std::vector<std::string> argv;
  /// Working directory of the child; empty keeps the parent's.
  std::string cwd;
  /// Pairs {child fd, parent fd}: the parent's fd appears as the child's fd.
  /// Parent fds must be 10 or above (make_pipe() ensures it). Fd 0 is
  /// /dev/null unless mapped here; unmapped fds 1 and 2 go to /dev/null too,
  /// unless named in `files`.
  std::vector<std::pair<int, int>> fds;
  /// Pairs {child fd, path}: files created (truncated) for the child's output.
  std::vector<std::pair<int, std::string>> files;
  /// "NAME=value" entries set in the child's environment, over the parent's
  /// variables of the same names, and "NAME" entries removed from it. Of
  /// the rest of the parent's, a child inherits only what inherited_name
  /// allows and secret_name does not refuse, unless `keep_secrets` (then
  /// all of it): a compiler or a runner (kernel code) has no use for eat's
  /// API keys or a DATABASE_URL, and could print them into its results.
  std::vector<std::string> env;
  bool keep_secrets = false;
  /// Where set, the child starts confined by Landlock to these rules
  /// (devices/landlock.hpp): it is spawned from a thread that confines
  /// itself first, and spawn() fails rather than start it unconfined.
  std::optional<landlock_rules> confine;
};

/// Whether a child inherits the parent's variable of this name: PATH,
/// HOME, USER, LOGNAME, LANG, LANGUAGE, TZ, TMPDIR, the compilers' and the
/// loader's search paths (LD_LIBRARY_PATH, LIBRARY_PATH, CPATH,
/// C_INCLUDE_PATH, CPLUS_INCLUDE_PATH, GCC_EXEC_PREFIX, COMPILER_PATH,
/// DEVICE_LIB_PATH), and names beginning with LC_, EAT_, CUDA_, NVCC_,
/// NVIDIA_, HIP_, HIPCC_, ROCM_, ROCR_, HSA_, AMD_, GPU_, OPENBLAS_, OMP_,
/// GOMP_ or a sanitizer's ASAN_, LSAN_, UBSAN_, TSAN_. Nothing else: a
/// red-team kernel printed DATABASE_URL, MYSQL_PWD, GH_PAT, DB_PASS and
/// SENTRY_DSN, which no secret-looking word names.
bool inherited_name(std::string_view name);

/// Whether an environment variable's name looks like a secret's: it holds
/// KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH in any case
/// (ANTHROPIC_API_KEY, GH_TOKEN, AWS_SECRET_ACCESS_KEY).
bool secret_name(std::string_view name);

/// How a process ended.
struct exit_status {
  /// True if it called exit; false if a signal ended it.
  bool exited = false;
  /// Exit code when `exited`.
  int code = 0;
  /// Terminating signal when not `exited`.
  int signal = 0;
};

/// Returns "SIGSEGV" for SIGSEGV, "signal 42" for a number without a name.
std::string signal_name(int sig);

/// Renders "exited with status 3" or "killed by SIGSEGV".
std::string to_string(const exit_status& x);

/// A spawned child that leads its own session and process group.
class child_process {
public:
  /// Starts `spec`; fails with error::io_failure naming the program.
  static caf::expected<child_process> spawn(const process_spec& spec);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) noexcept;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// Kills the group and reaps the child if that has not happened yet.
  ~child_process();

  pid_t pid() const {
    return pid_;
  }

  /// A descriptor that becomes readable when the child has exited.
  int exit_fd() const {
    return pidfd_.get();
  }

  /// Waits until the child exits or `deadline` passes; true if it exited.
  bool wait_until(steady_time deadline) const;

  /// Sends SIGKILL to every process of the group (no-op once reaped).
  void kill_group();

  /// Kills what is left of the group, then waits for the child and returns
  /// how it ended. Blocks until the child is gone.
  exit_status reap();

private:
  child_process(pid_t pid, unique_fd pidfd);

  pid_t pid_ = -1;
  unique_fd pidfd_;
  bool reaped_ = false;
  exit_status status_;
};

/// The outcome of run_captured.
struct captured_run {
  exit_status status;
  /// True if the deadline passed and the group was killed.
  bool timed_out = false;
  /// Combined stdout and stderr, at most `max_output` bytes of it.
  std::string output;
  /// Bytes of output beyond `max_output` that were discarded.
  size_t dropped = 0;
  double seconds = 0;
};

/// Runs `argv` in `cwd` (empty: the parent's) with stdout and stderr captured
/// through one pipe, killing its group after `timeout_s` seconds.
caf::expected<captured_run> run_captured(const std::vector<std::string>& argv,
  const std::string& cwd, double timeout_s, size_t max_output = 1 << 20);

/// The same for a whole spec (argv, cwd, env); its fds must not name the
/// child's 1 or 2, which go to the capture pipe.
caf::expected<captured_run> run_captured(
  const process_spec& spec, double timeout_s, size_t max_output = 1 << 20);

/// Returns the deadline `seconds` from now.
steady_time deadline_in(double seconds);

/// Polls `fd` for input until `deadline`; true if readable (or hung up).
bool wait_readable(int fd, steady_time deadline);

} // namespace eat::devices
