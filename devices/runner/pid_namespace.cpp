#include "devices/runner/pid_namespace.hpp"

#include "devices/runner/checks.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <new>

#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace eat::devices {

namespace {

/// Exit status of init or the waiter when they cannot do their job.
constexpr int lost_status = 125;

/// The page init shares with the worker: the CPU time of what init
/// reaped (null outside a namespace).
std::atomic<int64_t>* reaped_ns = nullptr;

/// Publishes the CPU time of init's reaped children.
void publish_reaped() {
  reaped_ns->store(reaped_children_cpu_ns());
}

pid_t wait_for(pid_t pid, int& status) {
  pid_t got;
  do
    got = ::waitpid(pid, &status, 0);
  while (got < 0 && errno == EINTR);
  return got;
}

/// Ends this process as `status` (a wait status) says: the same exit
/// code, or the same signal.
[[noreturn]] void end_as(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : lost_status);
}

/// The waiter: waits for init, then ends as the worker did (its wait
/// status comes from init on `from_init`), or as init did if init was
/// killed before it could tell.
[[noreturn]] void run_waiter(
  pid_t init, int from_init, const std::vector<runner_cgroup>& cgroups) {
  // A re-raised SIGSEGV must not leave a core file. (The waiter keeps the
  // protocol's pipes open but never uses them; it ends right after the
  // worker.)
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  int status = 0;
  if (wait_for(init, status) < 0)
    ::_exit(lost_status);
  // Every process of the namespace is gone or going: its cgroups can go.
  for (size_t i = 0; i < cgroups.size(); ++i) {
    bool seen = false; // under cgroup v2 one cgroup can serve twice
    for (size_t j = 0; j < i; ++j)
      seen = seen || cgroups[j].dir == cgroups[i].dir;
    if (!seen)
      leave_cgroup(cgroups[i]);
  }
  int worker = 0;
  ssize_t n;
  do
    n = ::read(from_init, &worker, sizeof(worker));
  while (n < 0 && errno == EINTR);
  end_as(n == static_cast<ssize_t>(sizeof(worker)) ? worker : status);
}

/// Init (PID 1): reaps every process of the namespace until the worker
/// ends, tells the waiter how the worker ended, and exits, which kills
/// what is left of the namespace.
[[noreturn]] void run_init(pid_t worker, int to_waiter) {
  for (;;) {
    int status = 0;
    pid_t got = ::waitpid(-1, &status, 0);
    if (got == worker) {
      ssize_t n;
      do
        n = ::write(to_waiter, &status, sizeof(status));
      while (n < 0 && errno == EINTR);
      ::_exit(0);
    }
    if (got < 0 && errno != EINTR)
      ::_exit(lost_status);
    if (got > 0)
      publish_reaped();
  }
}

std::string failure(const char* what) {
  return std::string{what} + ": " + std::strerror(errno);
}

} // namespace

pid_namespace_result enter_pid_namespace(
  const std::vector<runner_cgroup>& cgroups) {
  pid_namespace_result result;
  if (::unshare(CLONE_NEWPID) != 0)
    return result;
  void* page = ::mmap(nullptr, sizeof(std::atomic<int64_t>),
    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    result.error = failure("shared page for the PID namespace's init");
    return result;
  }
  reaped_ns = new (page) std::atomic<int64_t>{0};
  int status_pipe[2];
  if (::pipe(status_pipe) != 0) {
    result.error = failure("pipe for the PID namespace");
    return result;
  }
  pid_t init = ::fork();
  if (init < 0) {
    result.error = failure("fork of the PID namespace's init");
    return result;
  }
  if (init > 0) {
    ::close(status_pipe[1]);
    run_waiter(init, status_pipe[0], cgroups);
  }
  // Init: dies with the waiter (a deadline's SIGKILL of the process
  // group reaches all three anyway).
  ::close(status_pipe[0]);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  pid_t worker = ::fork();
  if (worker < 0)
    ::_exit(lost_status);
  if (worker > 0)
    run_init(worker, status_pipe[1]);
  ::close(status_pipe[1]);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Only init writes it.
  ::mprotect(page, sizeof(std::atomic<int64_t>), PROT_READ);
  result.isolated = true;
  return result;
}

int64_t cpu_reaped_by_init_ns() {
  return reaped_ns != nullptr ? reaped_ns->load() : 0;
}

} // namespace eat::devices
