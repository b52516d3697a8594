// Root's privileges dropped before kernel code runs (docs/harness.md,
// "Sandbox"). A runner started by root would otherwise load the kernel
// as root, with write access to the run's store and event log, every
// file of the machine, and a way around RLIMIT_NPROC; the CPU device asks
// for an unprivileged user instead (`[devices.cpu] run_as`, default
// "nobody"). The worker, which alone runs kernel code, then:
//
// - copies the shared objects it will load into memory files and loads
//   them through /proc/self/fd/N, so they need not be readable by that
//   user, nor their directories reachable;
// - gives its scratch directory (its working directory, which the device
//   made private to root) to that user, and points TMPDIR at it through
//   /proc/self/cwd where that user cannot reach it by its path;
// - leaves every supplementary group, then switches real, effective and
//   saved group and user ids, which clears all capabilities, and checks
//   that root cannot be had back;
// - sets its parent-death signal again, which the switch cleared.
//
// The switch also makes the worker non-dumpable: another evaluation's
// kernel, running as the same user, can neither trace it nor read its
// memory or files through /proc. The waiter and the namespace's init stay
// root; they run no kernel code.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eat::devices {

/// How drop_root rewrites the path of a shared object it opened.
constexpr const char* code_fd_prefix = "/proc/self/fd/";

/// Switches to `uid` and `gid` as above when the process is root and
/// `uid` is not negative; otherwise does nothing. `code` are the paths of
/// the shared objects to load afterwards, rewritten to /proc/self/fd/N of
/// a copy in memory.
/// Returns why it failed, or an empty string.
std::string drop_root(
  int64_t uid, int64_t gid, const std::vector<std::string*>& code);

/// Closes the descriptor behind a path that drop_root rewrote, once the
/// object is loaded, so that kernel code cannot load a second copy of the
/// reference through it; other paths are left alone.
void close_code_fd(const std::string& path);

} // namespace eat::devices
