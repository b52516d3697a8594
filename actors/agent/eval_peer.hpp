// Who is at the other end of an ./eval socket (actors/agent/eval_channel.hpp):
// whether a client lies in the PID namespace that an attempt's eat-keeper
// makes for its children. Stateless; safe from any thread.

#pragma once

#include <sys/types.h>

namespace eat {

/// Whether the client connected at `fd`, a UNIX stream socket, lies in the
/// PID namespace that process `keeper` makes for its children.
///
/// The client is the pid its credentials give (SO_PEERCRED), looked up in
/// /proc. Where the kernel also gives a pidfd of it (SO_PEERPIDFD, Linux
/// 6.5), the client must still be alive after that lookup: a client that
/// connected and exited could otherwise have its pid taken, before the
/// check, by a process of the keeper's namespace, and be served. false
/// when the client is gone or anything cannot be read.
bool peer_is_child_of(int fd, pid_t keeper);

} // namespace eat
