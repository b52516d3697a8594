// The user a device's runner switches to before it loads kernel code, when
// eat runs as root (`run_as` of [devices.cpu], [devices.cuda] and
// [devices.hip]; docs/harness.md, "Sandbox"), and the method line's words
// for whom kernel code ran as and how it was isolated. Reads the user
// database; any thread.

#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>

#include "devices/runner_protocol.hpp"

namespace eat::devices {

/// A user's ids; -1 when the runner keeps its own.
struct run_as_ids {
  int64_t uid = -1;
  int64_t gid = -1;
};

/// The ids of `user` when this process is root, the only one that can
/// switch to them; none when it is not root or `user` is empty (keep
/// root). Fails (invalid_config) naming `device` ("cpu device cpu0") when
/// the machine has no such user.
caf::error resolve_run_as(
  const std::string& device, const std::string& user, run_as_ids& ids);

/// "kernel code run as uid N", or "kernel code run as root" for uid 0:
/// the method line's words for whom a runner loaded kernel code as.
std::string kernel_user_note(int64_t uid);

/// "network isolated; kernel processes in their own PID namespace; tasks
/// capped by a pids cgroup", or the opposite of each, as `r` says: the
/// method line's words for how a runner isolated kernel code.
std::string isolation_note(const runner_reply& r);

} // namespace eat::devices
