// A user namespace for a runner that is not root (docs/harness.md,
// "Sandbox"): making a network or a PID namespace needs CAP_SYS_ADMIN,
// which an unprivileged runner holds only in a user namespace of its own.
// The runner keeps its user and group ids there (each mapped to itself),
// makes the other namespaces, and its worker then drops every capability
// before any kernel code is loaded, so kernel code runs as the same
// unprivileged user as without the namespace, with no network and with its
// processes in a PID namespace.
//
// Where user namespaces are disabled (user.max_user_namespaces = 0) or
// restricted (AppArmor's unprivileged_userns restriction), the runner goes
// on without, as before.

#pragma once

#include <string>

namespace eat::devices {

/// What enter_user_namespace() did.
struct user_namespace_result {
  /// Whether the process is now in a user namespace of its own.
  bool entered = false;
  /// Why not, when it stays where it was (user namespaces not allowed; a
  /// non-dumpable process, which could not write its own id maps).
  std::string why_not;
  /// Set when the namespace was made but its ids could not be mapped: the
  /// process cannot go back and must stop.
  std::string error;
};

/// Moves the calling, non-root process into a new user namespace in which
/// its user and group ids map to themselves.
user_namespace_result enter_user_namespace();

/// Drops every capability of the calling process: effective, permitted and
/// inheritable. Returns an empty string, or why not.
std::string drop_capabilities();

} // namespace eat::devices
