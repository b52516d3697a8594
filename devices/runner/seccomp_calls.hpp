// The system call lists of the kernel process's seccomp filter
// (devices/runner/seccomp_filter.cpp, which alone includes this): the
// calls refused whatever their arguments, with why, and those the filter
// checks by their first argument. Each entry is guarded, as not every
// architecture has every call.

#pragma once

#include <sys/syscall.h>

namespace eat::devices::seccomp_calls {

/// System calls that fail with EPERM whatever their arguments. Each is
/// guarded, as not every architecture has every one (aarch64 has no fork).
inline constexpr long denied[] = {
// Making processes and running programs.
#ifdef SYS_fork
  SYS_fork,
#endif
#ifdef SYS_vfork
  SYS_vfork,
#endif
#ifdef SYS_execve
  SYS_execve,
#endif
#ifdef SYS_execveat
  SYS_execveat,
#endif
// Reaching into other processes.
#ifdef SYS_ptrace
  SYS_ptrace,
#endif
#ifdef SYS_process_vm_readv
  SYS_process_vm_readv,
#endif
#ifdef SYS_process_vm_writev
  SYS_process_vm_writev,
#endif
#ifdef SYS_pidfd_open
  SYS_pidfd_open,
#endif
#ifdef SYS_pidfd_send_signal
  SYS_pidfd_send_signal,
#endif
#ifdef SYS_pidfd_getfd
  SYS_pidfd_getfd,
#endif
#ifdef SYS_kcmp
  SYS_kcmp,
#endif
#ifdef SYS_migrate_pages
  SYS_migrate_pages,
#endif
#ifdef SYS_move_pages
  SYS_move_pages,
#endif
// Rearranging the pages of a shared mapping (deprecated; a kernel used it
// to reach a page of the arena's file that it was not to see).
#ifdef SYS_remap_file_pages
  SYS_remap_file_pages,
#endif
#ifdef SYS_process_madvise
  SYS_process_madvise,
#endif
// Scheduling and CPU sets, which the timing relies on.
#ifdef SYS_sched_setaffinity
  SYS_sched_setaffinity,
#endif
#ifdef SYS_sched_setscheduler
  SYS_sched_setscheduler,
#endif
#ifdef SYS_sched_setparam
  SYS_sched_setparam,
#endif
#ifdef SYS_sched_setattr
  SYS_sched_setattr,
#endif
#ifdef SYS_setpriority
  SYS_setpriority,
#endif
// Sockets, asynchronous I/O, perf events and BPF.
#ifdef SYS_socket
  SYS_socket,
#endif
#ifdef SYS_socketpair
  SYS_socketpair,
#endif
#ifdef SYS_io_uring_setup
  SYS_io_uring_setup,
#endif
#ifdef SYS_io_uring_enter
  SYS_io_uring_enter,
#endif
#ifdef SYS_io_uring_register
  SYS_io_uring_register,
#endif
#ifdef SYS_io_setup
  SYS_io_setup,
#endif
#ifdef SYS_io_submit
  SYS_io_submit,
#endif
#ifdef SYS_perf_event_open
  SYS_perf_event_open,
#endif
// Reads started ahead: their completions interrupt whichever core the
// device's interrupt goes to, the timed one included, in the baseline's
// calls (a red team's posix_fadvise(WILLNEED) of a library's pages took
// the baseline's calls from 1.05 to 1.88 ms, though at a higher cost to
// the candidate's own). A kernel needs no reads ahead.
#ifdef SYS_fadvise64
  SYS_fadvise64,
#endif
#ifdef SYS_readahead
  SYS_readahead,
#endif
// File locks: another process sees them (F_GETLK) without taking them,
// and a red team's kernel held a read lock on a system file for the length
// of each of its calls, telling a process on the other core when the
// baseline's calls ran; that process aimed a storm of disk interrupts at
// them, which land on the device's core and are no task, so that nothing
// of them came off the baseline's samples (12 - 27 % more speedup,
// re-verified). fcntl's lock commands are refused below. A kernel needs
// no lock.
#ifdef SYS_flock
  SYS_flock,
#endif
#ifdef SYS_bpf
  SYS_bpf,
#endif
#ifdef SYS_userfaultfd
  SYS_userfaultfd,
#endif
// Files and memory that outlive the kernel's process or escape its
// address-space limit: kernel code writes only into the buffers it is
// given. As `nobody`, a kernel could fill /dev/shm (memory: the files stay
// after the evaluation), /tmp or the disk the store is on with files of up
// to RLIMIT_FSIZE each, or memory with memory files and System V segments,
// which RLIMIT_AS does not count. Opening a file for writing is refused
// below (open, openat); reading stays allowed. fallocate and ftruncate
// too: punching a hole in a shared memory file (were a descriptor of the
// arena ever left open) would take the baseline's pages out of memory as
// MADV_REMOVE did.
#ifdef SYS_creat
  SYS_creat,
#endif
#ifdef SYS_openat2
  SYS_openat2,
#endif
#ifdef SYS_truncate
  SYS_truncate,
#endif
#ifdef SYS_mkdir
  SYS_mkdir,
#endif
#ifdef SYS_mkdirat
  SYS_mkdirat,
#endif
#ifdef SYS_mknod
  SYS_mknod,
#endif
#ifdef SYS_mknodat
  SYS_mknodat,
#endif
#ifdef SYS_link
  SYS_link,
#endif
#ifdef SYS_linkat
  SYS_linkat,
#endif
#ifdef SYS_symlink
  SYS_symlink,
#endif
#ifdef SYS_symlinkat
  SYS_symlinkat,
#endif
#ifdef SYS_rename
  SYS_rename,
#endif
#ifdef SYS_renameat
  SYS_renameat,
#endif
#ifdef SYS_renameat2
  SYS_renameat2,
#endif
#ifdef SYS_unlink
  SYS_unlink,
#endif
#ifdef SYS_unlinkat
  SYS_unlinkat,
#endif
#ifdef SYS_rmdir
  SYS_rmdir,
#endif
#ifdef SYS_fallocate
  SYS_fallocate,
#endif
#ifdef SYS_ftruncate
  SYS_ftruncate,
#endif
#ifdef SYS_memfd_create
  SYS_memfd_create,
#endif
#ifdef SYS_shmget
  SYS_shmget,
#endif
#ifdef SYS_msgget
  SYS_msgget,
#endif
#ifdef SYS_semget
  SYS_semget,
#endif
// Timers and watched descriptors, which make the kernel work later in
// interrupts charged to whatever runs then: a red-team candidate armed
// 200 timerfds, each watched by 1000 epoll instances, to expire during the
// baseline's calls (~130 us of interrupt work each, none of it the
// candidate's CPU time): 1.39x - 1.61x for the baseline's softmax.
#ifdef SYS_timerfd_create
  SYS_timerfd_create,
#endif
#ifdef SYS_timerfd_settime
  SYS_timerfd_settime,
#endif
#ifdef SYS_timer_create
  SYS_timer_create,
#endif
#ifdef SYS_timer_settime
  SYS_timer_settime,
#endif
#ifdef SYS_setitimer
  SYS_setitimer,
#endif
#ifdef SYS_alarm
  SYS_alarm,
#endif
#ifdef SYS_epoll_create
  SYS_epoll_create,
#endif
#ifdef SYS_epoll_create1
  SYS_epoll_create1,
#endif
#ifdef SYS_epoll_ctl
  SYS_epoll_ctl,
#endif
#ifdef SYS_inotify_init
  SYS_inotify_init,
#endif
#ifdef SYS_inotify_init1
  SYS_inotify_init1,
#endif
#ifdef SYS_fanotify_init
  SYS_fanotify_init,
#endif
// Namespaces, mounts and the root directory.
#ifdef SYS_unshare
  SYS_unshare,
#endif
#ifdef SYS_setns
  SYS_setns,
#endif
#ifdef SYS_mount
  SYS_mount,
#endif
#ifdef SYS_umount2
  SYS_umount2,
#endif
#ifdef SYS_chroot
  SYS_chroot,
#endif
#ifdef SYS_pivot_root
  SYS_pivot_root,
#endif
// The kernel's keyrings, and the execution domain.
#ifdef SYS_keyctl
  SYS_keyctl,
#endif
#ifdef SYS_add_key
  SYS_add_key,
#endif
#ifdef SYS_request_key
  SYS_request_key,
#endif
#ifdef SYS_personality
  SYS_personality,
#endif
// Leaving the runner's process group would escape its group kill.
#ifdef SYS_setsid
  SYS_setsid,
#endif
#ifdef SYS_setpgid
  SYS_setpgid,
#endif
// glibc signals a thread with tgkill, which is checked below.
#ifdef SYS_tkill
  SYS_tkill,
#endif
};

/// System calls that send a signal to the process (or thread group) named
/// by their first argument: allowed only towards the process itself.
inline constexpr long signalling[] = {
#ifdef SYS_kill
  SYS_kill,
#endif
#ifdef SYS_tgkill
  SYS_tgkill,
#endif
#ifdef SYS_rt_sigqueueinfo
  SYS_rt_sigqueueinfo,
#endif
#ifdef SYS_rt_tgsigqueueinfo
  SYS_rt_tgsigqueueinfo,
#endif
};

/// System calls that take a clock id as their first argument.
inline constexpr long clock_reading[] = {
#ifdef SYS_clock_gettime
  SYS_clock_gettime,
#endif
#ifdef SYS_clock_getres
  SYS_clock_getres,
#endif
#ifdef SYS_clock_nanosleep
  SYS_clock_nanosleep,
#endif
};

} // namespace eat::devices::seccomp_calls
