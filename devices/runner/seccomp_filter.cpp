#include "devices/runner/seccomp_filter.hpp"
#include "devices/runner/seccomp_calls.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// The ABI the filter lets through: the build's own.
#if defined(__x86_64__)
#  define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#  define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif
#ifndef SYS_seccomp // headers older than Linux 3.17
#  undef FILTER_ARCH
#endif

namespace eat::devices {

#ifdef FILTER_ARCH

namespace {

using seccomp_calls::clock_reading;
using seccomp_calls::denied;
using seccomp_calls::signalling;

/// System call numbers of the x32 ABI, which shares x86-64's AUDIT_ARCH.
constexpr uint32_t x32_bit = 0x40000000;

using program = std::vector<sock_filter>;

constexpr uint32_t allow = SECCOMP_RET_ALLOW;
constexpr uint32_t eperm = SECCOMP_RET_ERRNO | EPERM;
constexpr uint32_t enosys = SECCOMP_RET_ERRNO | ENOSYS;

std::string seccomp_failure(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

/// Ends the filter with `action`.
sock_filter ret(uint32_t action) {
  return BPF_STMT(BPF_RET | BPF_K, action);
}

/// Loads the 32-bit word at `offset` of struct seccomp_data.
sock_filter load(size_t offset) {
  return BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(offset));
}

/// Offset of the low 32 bits of argument `i` (both ABIs are little-endian).
size_t arg_low(size_t i) {
  return offsetof(seccomp_data, args) + i * sizeof(uint64_t);
}

/// Runs `then` when the loaded word passes `test` (BPF_JEQ, BPF_JGE,
/// BPF_JSET) against `k`, otherwise goes on past it. `then` must end in a
/// return, so the word is still loaded after a skip.
program when(uint16_t test, uint32_t k, const program& then) {
  program out{
    BPF_JUMP(BPF_JMP | test | BPF_K, k, 0, static_cast<uint8_t>(then.size()))};
  out.insert(out.end(), then.begin(), then.end());
  return out;
}

/// Returns `yes` when the low 32 bits of argument `i` pass `test` against
/// `k`, otherwise `no`.
program if_arg(size_t i, uint16_t test, uint32_t k, uint32_t yes, uint32_t no) {
  return {load(arg_low(i)), BPF_JUMP(BPF_JMP | test | BPF_K, k, 0, 1), ret(yes),
    ret(no)};
}

/// Returns `yes` when argument `i` (its low 32 bits) is one of `values`,
/// else `no`.
program any_of(
  size_t i, std::initializer_list<uint32_t> values, uint32_t yes, uint32_t no) {
  program block{load(arg_low(i))};
  auto left = static_cast<uint8_t>(values.size());
  for (auto v : values)
    block.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, v, left--, 0));
  block.push_back(ret(no));
  block.push_back(ret(yes));
  return block;
}

/// The whole filter, for a process whose pid is `self`.
program build_filter(pid_t self) {
  program filter;
  auto add = [&filter](const program& block) {
    filter.insert(filter.end(), block.begin(), block.end());
  };
  // A system call of another ABI (i386 through int 0x80, arm32) would be
  // read with other numbers: it kills the process.
  add({load(offsetof(seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
    ret(SECCOMP_RET_KILL_PROCESS)});
  // From here on the system call number stays loaded.
  add({load(offsetof(seccomp_data, nr))});
#  ifdef __x86_64__
  add(when(BPF_JGE, x32_bit, {ret(eperm)}));
#  endif
  for (long nr : denied)
    add(when(BPF_JEQ, static_cast<uint32_t>(nr), {ret(eperm)}));
#  ifdef SYS_clone3
  // Without clone3, glibc's pthread_create falls back to clone, whose flags
  // can be checked: a thread has CLONE_THREAD, a new process has not.
  add(when(BPF_JEQ, SYS_clone3, {ret(enosys)}));
#  endif
#  ifdef SYS_clone
  add(
    when(BPF_JEQ, SYS_clone, if_arg(0, BPF_JSET, CLONE_THREAD, allow, eperm)));
#  endif
#  ifdef SYS_madvise
  // Advice that takes pages out of memory or out of the page tables of
  // every process mapping them (MADV_REMOVE punches them out of the shared
  // file; cold and paged-out pages are reclaimed): a kernel removed the
  // baseline's output pages so that the baseline took a page fault on each
  // inside its timed calls (a red-team candidate: 2.6x for the baseline's
  // softmax). MADV_COLLAPSE (25; glibc 2.36 lacks the name) makes huge pages of
  // shared ones, taking them out of every other process's page tables.
  // MADV_WILLNEED starts reads ahead from a file mapping, as fadvise does.
  constexpr uint32_t madv_collapse = 25;
  add(when(BPF_JEQ, SYS_madvise,
    {load(arg_low(2)), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_REMOVE, 5, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_COLD, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_PAGEOUT, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, madv_collapse, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_WILLNEED, 1, 0), ret(allow),
      ret(eperm)}));
#  endif
  // Opening a file to write it, create it or truncate it (see `denied`).
  constexpr uint32_t writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;
#  ifdef SYS_open
  add(when(BPF_JEQ, SYS_open, if_arg(1, BPF_JSET, writes, eperm, allow)));
#  endif
#  ifdef SYS_openat
  add(when(BPF_JEQ, SYS_openat, if_arg(2, BPF_JSET, writes, eperm, allow)));
#  endif
#  ifdef SYS_prctl
  // The parent-death signal stays: the process dies with its runner.
  add(when(
    BPF_JEQ, SYS_prctl, if_arg(0, BPF_JEQ, PR_SET_PDEATHSIG, eperm, allow)));
#  endif
#  ifdef SYS_prlimit64
  // Resource limits only its own (0 or its pid): other processes of the
  // evaluation run as the same user, whose limits a process may otherwise
  // set (a CPU-time limit of a second kills its holder then).
  add(when(BPF_JEQ, SYS_prlimit64,
    {load(arg_low(0)), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(self), 0, 1),
      ret(allow), ret(eperm)}));
#  endif
#  ifdef SYS_fcntl
  // Owning a descriptor's signals: writing to a pipe whose other end a
  // process owns sends it SIGIO, or any signal F_SETSIG names, past the
  // checks on kill below. A red-team candidate stopped the baseline's
  // process for the length of each of its calls and continued it after
  // (SIGSTOP, SIGCONT: no CPU time on either side): 4.66x for the
  // baseline's own softmax, confirmed by re-verification.
  // Its lock commands too (see flock above).
  add(when(BPF_JEQ, SYS_fcntl,
    any_of(1,
      {F_SETOWN, F_SETOWN_EX, F_SETSIG, F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK,
        F_OFD_SETLK, F_OFD_SETLKW},
      eperm, allow)));
#  endif
#  ifdef SYS_ioctl
  // The same through ioctl, and the terminal: its process group, pushing
  // characters into its input, making it the controlling terminal.
  add(when(BPF_JEQ, SYS_ioctl,
    {load(arg_low(1)), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FIOSETOWN, 5, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIOCSPGRP, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSPGRP, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSCTTY, 1, 0), ret(allow),
      ret(eperm)}));
#  endif
  // The CPU clocks of other processes and threads (negative clock ids;
  // a process's own are CLOCK_PROCESS_CPUTIME_ID and
  // CLOCK_THREAD_CPUTIME_ID): by the baseline's the red-team candidate
  // told whether the baseline or itself came next in each round.
  for (long nr : clock_reading)
    add(when(BPF_JEQ, static_cast<uint32_t>(nr),
      if_arg(0, BPF_JSET, 0x80000000U, eperm, allow)));
  // Signals only to itself: raise() and abort() still work, while another
  // pid, a process group (0 or negative) or every process (-1) is refused.
  for (long nr : signalling)
    add(when(BPF_JEQ, static_cast<uint32_t>(nr),
      if_arg(0, BPF_JEQ, static_cast<uint32_t>(self), allow, eperm)));
  add({ret(allow)});
  return filter;
}

/// A filter under which the system calls `calls` fail (EPERM) and every
/// other is allowed, but for those of another ABI (x32), which fail too.
program refusing(std::initializer_list<long> calls) {
  program filter{load(offsetof(seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
    ret(SECCOMP_RET_KILL_PROCESS), load(offsetof(seccomp_data, nr))};
  auto add = [&filter](const program& block) {
    filter.insert(filter.end(), block.begin(), block.end());
  };
#  ifdef __x86_64__
  add(when(BPF_JGE, x32_bit, {ret(eperm)}));
#  endif
  for (long nr : calls)
    add(when(BPF_JEQ, static_cast<uint32_t>(nr), {ret(eperm)}));
  add({ret(allow)});
  return filter;
}

/// Sets no_new_privs and installs `filter` on every thread of the process.
std::string install(program filter) {
  sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return seccomp_failure("prctl(PR_SET_NO_NEW_PRIVS)");
  long synced = ::syscall(
    SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (synced < 0)
    return seccomp_failure("seccomp(SECCOMP_SET_MODE_FILTER)");
  if (synced > 0)
    return "seccomp: thread " + std::to_string(synced)
           + " has a filter of its own and could not be confined";
  return {};
}

} // namespace

std::string refuse_system_calls(std::initializer_list<long> calls) {
  return install(refusing(calls));
}

std::string keep_in_process_group() {
  return refuse_system_calls({SYS_setsid, SYS_setpgid});
}

std::string refuse_keyrings() {
  return refuse_system_calls({SYS_keyctl, SYS_add_key, SYS_request_key});
}

std::string refuse_affinity_changes() {
  return refuse_system_calls({SYS_sched_setaffinity});
}

std::string confine_kernel_process() {
  // Should another thread exist after all, TSYNC confines it as well.
  return install(build_filter(::getpid()));
}

#else

namespace {

constexpr const char* no_filter = "no seccomp filter for this architecture "
                                  "(only x86-64 and little-endian aarch64)";

} // namespace

/// Nothing to install: on these architectures a kernel's process can
/// still leave the group (docs/harness.md, "Known limits").
std::string keep_in_process_group() {
  return {};
}

std::string refuse_keyrings() {
  return {};
}

std::string refuse_affinity_changes() {
  return {};
}

std::string refuse_system_calls(std::initializer_list<long>) {
  return no_filter;
}

std::string confine_kernel_process() {
  return no_filter;
}

#endif

} // namespace eat::devices
