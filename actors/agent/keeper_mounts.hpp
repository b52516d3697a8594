// The mounts eat-keeper gives a CLI (keeper.hpp): in a mount namespace of
// its own, the run's files (its store, the compile cache, the other
// workspaces, the task and eat's programs) are read-only, and only the
// CLI's workspace is writable. Before, a CLI could overwrite the cached
// baseline or reference object, or the run's store, as eat's user (red
// team: a wrong kernel scored 16.5x and passed re-verification).
//
// Called by the init of the CLI's PID namespace, which holds CAP_SYS_ADMIN
// in the keeper's user namespace (or is root), before it starts the CLI.
// Plain system calls.

#pragma once

#include <string>
#include <vector>

namespace eat {

/// Moves the calling process, the init of a new PID namespace, into a new
/// mount namespace, private to it, in which every path of `read_only` (and
/// what is mounted under it) is read-only, then every path of `writable`
/// writable again, and /proc shows only the PID namespace's processes.
/// Paths must be absolute and canonical; missing ones are skipped.
/// Returns an empty string, or what failed.
std::string make_read_only(const std::vector<std::string>& read_only,
  const std::vector<std::string>& writable);

/// For a program started as root: empties the calling process's
/// capability bounding set and its capabilities, so that the program runs
/// as a root without privileges, which cannot undo the mounts above
/// (remount, umount), nor reach around them (raw devices, file handles).
/// Returns an empty string, or what failed.
std::string give_up_capabilities();

} // namespace eat
