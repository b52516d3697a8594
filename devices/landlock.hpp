// Landlock (Linux 5.13 and later): a thread takes away its own access to
// files, and that of everything it starts afterwards, whatever its user
// (root included). The compile stage confines each compile with it (a
// source's `#include` or `.incbin` of a file outside the toolchain and its
// build directory fails with "Permission denied") and a kernel's process
// confines itself before loading its kernel (docs/harness.md, "Compile
// stage" and "Kernel processes").
//
// A confinement is built from the ABI the running kernel has: file rights
// from ABI 1 (truncation from 3, device ioctls from 5); from ABI 4 no TCP
// bind or connect; from ABI 6 no signal to a process outside the domain
// (eat, the runner, the other kernel) and no abstract unix socket.

#pragma once

#include <string>
#include <vector>

namespace eat::devices {

/// The Landlock ABI version of the running kernel; 0 where it has none
/// (older than 5.13, or built or booted without it).
int landlock_abi();

/// "Landlock ABI 7", or why there is none ("this kernel has no Landlock").
std::string landlock_description();

/// What a confined thread may still reach: read and execute files and list
/// directories beneath each of `read`; do anything beneath each of
/// `write`. A path that does not exist is skipped; one that is a file
/// grants only that file.
struct landlock_rules {
  std::vector<std::string> read;
  std::vector<std::string> write;
};

/// Confines the calling thread, and what it starts from now on, to
/// `rules` (and sets its no_new_privs flag, which Landlock needs). The
/// rest of the process is untouched. Irreversible. Returns why it could
/// not (no Landlock, a rule refused), or an empty string.
std::string landlock_confine(const landlock_rules& rules);

/// What a compiler or a loaded kernel reads from the system, and nothing
/// else of it: /usr, /lib*, /bin, /sbin, /opt, the dynamic linker's cache,
/// the files with which toolchains tell the distribution (hipcc reads
/// /etc/os-release), the time zone and /dev/null; not /dev/urandom nor
/// /dev/zero, which an `#include` reads for ever.
std::vector<std::string> system_read_paths();

} // namespace eat::devices
