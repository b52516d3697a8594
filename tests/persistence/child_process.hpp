// Forked child processes for tests that kill writers and readers: the child
// runs a function and leaves with _exit; the parent talks to it through a
// pipe (never through sleeps) and reaps it. Owned by the test that forks.
//
// Fork only from a single-threaded test, with no store open that the child
// would use: the child opens its own.

#pragma once

#include <cstddef>
#include <functional>

#include <sys/types.h>

namespace eat::test {

/// A forked child and the read end of the pipe it writes to.
class child_process {
public:
  /// Forks; the child runs `body(write_fd)` and _exits with its result (3
  /// when it throws).
  explicit child_process(const std::function<int(int write_fd)>& body);

  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// Kills the child with SIGKILL unless it was reaped.
  ~child_process();

  /// Reads exactly `size` bytes from the child; false at end of file.
  bool read_exact(void* buf, size_t size);

  /// Sends SIGKILL and reaps the child; returns its wait status.
  int kill_and_reap();

  /// Waits for the child to end; returns its wait status.
  int reap();

private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
};

} // namespace eat::test
