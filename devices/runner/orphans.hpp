// A runner without a PID namespace of its own (not root and no user
// namespaces: docs/harness.md, "Sandbox") adopts the orphans of its
// kernels. As a child subreaper, a process of a kernel that outlives its
// parent (a double fork) becomes the runner's child instead of init's: the
// checks after each call see it (has_child_processes,
// devices/runner/checks.hpp), and the runner kills it before it replies, so
// that it cannot run on into later evaluations. (A runner killed at its
// deadline cannot, but then the group kill reaches them: keep_in_process_group,
// devices/runner/seccomp_filter.hpp, keeps every process of a kernel in the
// runner's group.) Called from the runner's only thread.

#pragma once

#include <cstddef>

namespace eat::devices {

/// Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER); false
/// where the kernel refuses.
bool adopt_orphans();

/// Kills every child process of this one with SIGKILL and reaps it, until
/// none is left (children killed hand theirs to this process, which kills
/// those in turn), for at most `limit_s` seconds. Returns how many it
/// killed.
size_t end_children(double limit_s = 5);

} // namespace eat::devices
