// A seccomp filter for the process that runs kernel code (docs/harness.md,
// "Sandbox"). The namespaces and the dropped privileges limit what kernel
// code can reach; the filter takes away the system calls by which it could
// still act outside its own process: making processes or running programs,
// tracing or signalling other processes (also through a descriptor's
// owner or a terminal), reading their memory or their CPU clocks, changing
// its scheduling or CPU set, opening sockets, io_uring and perf events,
// BPF, namespaces and mounts, the kernel's keyrings, timers and watched
// descriptors, writing or creating files, memory files and System V IPC.
// Threads, signals to itself, ordinary memory, reading files and clock
// calls stay allowed.
//
// The filter is classic BPF built by hand (libseccomp is not available).
// It knows x86-64 and aarch64; a system call of another ABI (i386 through
// int 0x80, or x32) does not get through.

#pragma once

#include <initializer_list>
#include <string>

namespace eat::devices {

/// Confines the calling process, which must still be single-threaded, for
/// running untrusted kernel code: sets no_new_privs and installs a seccomp
/// filter (raw classic BPF; libseccomp is not available) under which the
/// system calls by which the process could act outside itself fail.
/// Returns "" on success, otherwise why not (errno text included).
std::string confine_kernel_process();

/// Keeps the calling process, every thread of it and every process it
/// starts from now on in its process group, and its session: setsid and
/// setpgid fail (EPERM) under a seccomp filter (with no_new_privs), so
/// that the group kill at an evaluation's deadline reaches every process
/// of a kernel. For a runner whose kernels run in its own process (the
/// CPU runner's trusted templates, the GPU runners), installed before any
/// kernel code is loaded. Returns "" on success (and, doing nothing, on
/// an architecture the filters do not know), otherwise why not.
std::string keep_in_process_group();

/// Takes the kernel's keyrings from the calling process and every process
/// it starts from now on: keyctl, add_key and request_key fail (EPERM)
/// under a seccomp filter (with no_new_privs). Keyrings have no namespace
/// but the user one: a coding-agent CLI run as eat's user read keys of
/// eat's session and user keyrings, and planted some there (red team).
/// For eat-keeper's init, before it starts a CLI. Returns "" on success
/// (and, doing nothing, on an architecture the filters do not know),
/// otherwise why not.
std::string refuse_keyrings();

/// Keeps the calling process and every process it starts from now on on
/// the cores their affinity allows now: sched_setaffinity fails (EPERM)
/// under a seccomp filter (with no_new_privs). eat keeps its own threads
/// off the cores that time kernels, and the CLIs it starts inherit that;
/// a red team's CLI moved a load onto the device's core, which slowed the
/// baseline's long calls more than a fast candidate's (1.3x reported for
/// the same code). For eat-keeper's init, before it starts a CLI. Returns
/// "" on success (and, doing nothing, on an architecture the filters do
/// not know), otherwise why not.
std::string refuse_affinity_changes();

/// Makes the system calls numbered `calls` fail (EPERM) for the calling
/// process, every thread of it and every process it starts from now on
/// (seccomp, with no_new_privs); the two above are made of it. Returns ""
/// on success, otherwise why not (also on an architecture the filters do
/// not know).
std::string refuse_system_calls(std::initializer_list<long> calls);

} // namespace eat::devices
