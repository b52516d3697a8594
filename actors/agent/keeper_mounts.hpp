// The mounts eat-keeper gives a CLI (keeper.hpp): in a mount namespace of
// its own, all is read-only but its home, the temporary folders and its
// workspace, and within those the run's files (its store, the compile
// cache, the other workspaces), the task and eat's programs are read-only
// again; the kernel's settings under /proc are read-only too. Before, a
// CLI could overwrite the cached baseline or reference object, or the
// run's store, as eat's user (red team: a wrong kernel scored 16.5x and
// passed re-verification), and as root set kernel.core_pattern.
//
// Called by the init of the CLI's PID namespace, which holds CAP_SYS_ADMIN
// in the keeper's user namespace (or is root), before it starts the CLI.
// Plain system calls.

#pragma once

#include <string>
#include <utility>
#include <vector>

namespace eat {

enum class mount_kind { read_only, writable, hidden };

/// A path of the CLI's mount namespace and what becomes of it.
struct keeper_mount {
  std::string path;
  mount_kind kind = mount_kind::read_only;
  /// Read-only or writable: what is mounted at `path`, as it was before
  /// any change (empty: `path` itself; e.g. a team's own copy of
  /// ~/.claude mounted over the operator's).
  std::string source = {};
};

/// Moves the calling process, the init of a new PID namespace, into a new
/// mount namespace, private to it, in which each path of `mounts` (with
/// what is mounted under it), in order, each over those before, is made
/// read-only, writable, or hidden under an empty tmpfs of its own, which it
/// may write (its private /tmp; a later path under a hidden one shows what
/// was there before), or `source` mounted there, read-only or writable.
/// /dev is one of its own with
/// only null, zero, full, random, urandom, tty, ptys and shm; /proc shows
/// only the PID namespace's processes, and its kernel settings (/proc/sys,
/// /proc/sysrq-trigger, ...) are read-only. Paths must be absolute and
/// canonical; missing ones are skipped. Returns an empty string, or what
/// failed.
std::string make_read_only(const std::vector<keeper_mount>& mounts);

/// For a program started as root: empties the calling process's
/// capability bounding set and its capabilities, so that the program runs
/// as a root without privileges, which cannot undo the mounts above
/// (remount, umount), nor reach around them (raw devices, file handles).
/// Returns an empty string, or what failed.
std::string give_up_capabilities();

} // namespace eat
