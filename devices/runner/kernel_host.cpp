#include "devices/runner/kernel_host.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <new>
#include <vector>

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/page_allocator.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/drop_root.hpp"
#include "devices/subprocess.hpp"

extern char** environ;

namespace eat::devices {

namespace {

/// How long the runner waits on `done` before it looks whether the process
/// is still alive (a call that returns wakes it at once; each look takes
/// the core from a long call for a few microseconds).
constexpr long liveness_poll_ns = 100'000'000;

/// How long the runner lets a process take to get back to waiting after
/// its call (kernel_host::settle); one that takes longer, or never sets
/// `parked`, has its CPU time from then on counted between its calls.
constexpr int64_t settle_limit_ns = 50'000'000;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

void futex_wake(std::atomic<uint32_t>& word) {
  ::syscall(SYS_futex, &word, FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

/// The descriptor behind a path drop_root rewrote, or -1.
int code_fd(const std::string& path) {
  auto prefix = std::strlen(code_fd_prefix);
  if (path.compare(0, prefix, code_fd_prefix) != 0)
    return -1;
  return std::atoi(path.c_str() + prefix);
}

/// A control block in a memory file of its own, mapped here; its
/// descriptor in `fd` (closed by the caller once the process has it).
host_control* make_control(int& fd, std::string& why) {
  fd = ::memfd_create("eat-control", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, control_bytes) != 0) {
    why = std::string{"cannot make a control block: "} + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return nullptr;
  }
  void* block
    = ::mmap(nullptr, control_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (block == MAP_FAILED) {
    why = std::string{"cannot map a control block: "} + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  return new (block) host_control{};
}

/// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_host(pid_t parent, int exe, int arena_fd, int control_fd,
  int so_fd, char* const* argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent)
    ::_exit(127);
  ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  ::fcntl(arena_fd, F_SETFD, 0);
  ::fcntl(control_fd, F_SETFD, 0);
  if (so_fd >= 0)
    ::fcntl(so_fd, F_SETFD, 0);
  ::syscall(SYS_execveat, exe, "", argv, environ, AT_EMPTY_PATH);
  ::_exit(127);
}

} // namespace

std::string stop_seen(pid_t pid) {
  siginfo_t info{};
  if (::waitid(
        P_PID, static_cast<id_t>(pid), &info, WSTOPPED | WCONTINUED | WNOHANG)
        != 0
      || info.si_pid == 0)
    return {};
  if (info.si_code == CLD_CONTINUED)
    return "was stopped and continued by a signal";
  return "was stopped by " + signal_name(info.si_status);
}

std::unique_ptr<kernel_host> kernel_host::start(shared_arena& arena,
  const std::string& so, const char* entry, const std::string& role,
  eval_status& status, std::string& why) {
  status = eval_status::runtime_error;
  int control_fd = -1;
  auto* control = make_control(control_fd, why);
  if (control == nullptr) {
    why = "the " + role + "'s process: " + why;
    return nullptr;
  }
  auto unmap = [&] {
    control->~host_control();
    ::munmap(control, control_bytes);
  };
  // Non-dumpable: a kernel running as the same user cannot trace the
  // runner or open its memory through /proc.
  ::prctl(PR_SET_DUMPABLE, 0);
  int exe = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (exe < 0) {
    why = std::string{"cannot open the runner's executable: "}
          + std::strerror(errno);
    ::close(control_fd);
    unmap();
    return nullptr;
  }
  std::vector<std::string> args{"eat-kernel-host", kernel_host_flag,
    std::to_string(arena.fd()),
    std::to_string(reinterpret_cast<uintptr_t>(arena.base())),
    std::to_string(arena.size()), std::to_string(control_fd), so, entry};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto parent = ::getpid();
  auto pid = ::fork();
  if (pid == 0)
    exec_host(parent, exe, arena.fd(), control_fd, code_fd(so), argv.data());
  ::close(exe);
  ::close(control_fd);
  if (pid < 0) {
    why = "cannot start the " + role + "'s process: " + std::strerror(errno);
    unmap();
    return nullptr;
  }
  std::unique_ptr<kernel_host> host{new kernel_host(arena, control, pid, role)};
  if (auto failed = host->wait_done(1); !failed.empty()) {
    why = "the " + role + "'s process " + failed + " before its kernel "
          + "was loaded";
    if (failed == to_string(exit_status{true, host_cannot_map, 0}))
      why += " (it could not map the shared memory at the runner's address)";
    if (failed == to_string(exit_status{true, host_cannot_map_control, 0}))
      why += " (it could not map its control block)";
    return nullptr;
  }
  if (control->failure != host_control::none) {
    auto text = std::string{
      control->error, ::strnlen(control->error, host_control::error_bytes)};
    if (control->failure == host_control::not_loaded)
      status = role == "candidate" ? eval_status::compile_error
                                   : eval_status::rejected;
    why = (role == "candidate" ? "the candidate " : "the task's baseline ")
          + text;
    return nullptr;
  }
  ::prctl(PR_SET_TIMERSLACK, 1'000UL);
  host->settle(1);
  host->last_cpu_ = host->cpu_now();
  if (host->last_cpu_ < 0) {
    why = "cannot read the CPU clock of the " + role + "'s process";
    return nullptr;
  }
  return host;
}

kernel_host::kernel_host(
  shared_arena& arena, host_control* control, pid_t pid, std::string role)
  : arena_(arena), control_(control), pid_(pid), role_(std::move(role)) {
  if (::clock_getcpuclockid(pid_, &clock_) != 0)
    clock_ = 0;
  sched_ = schedstat_file::of_child(pid_);
  runner_sched_ = schedstat_file::of_this_thread();
}

kernel_host::~kernel_host() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      // retry
    }
  }
  control_->~host_control();
  ::munmap(control_, control_bytes);
}

int64_t kernel_host::cpu_now() const {
  timespec t{};
  if (clock_ == 0 || ::clock_gettime(clock_, &t) != 0)
    return -1;
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

std::string kernel_host::wait_done(uint32_t seq) {
  for (;;) {
    auto seen = control_->done.load(std::memory_order_acquire);
    if (seen == seq)
      return {};
    timespec poll{0, liveness_poll_ns};
    ::syscall(SYS_futex, &control_->done, FUTEX_WAIT, seen, &poll, nullptr, 0);
    if (control_->done.load(std::memory_order_acquire) == seq)
      return {};
    int status = 0;
    auto r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      exit_status x;
      x.exited = WIFEXITED(status);
      x.code = x.exited ? WEXITSTATUS(status) : 0;
      x.signal = x.exited ? 0 : WTERMSIG(status);
      return to_string(x);
    }
    if (r < 0 && errno != EINTR)
      return std::string{"cannot be waited for: "} + std::strerror(errno);
    // Stopped, it would not post `done` before the deadline.
    if (auto stopped = stop_seen(pid_); !stopped.empty())
      return stopped;
  }
}

void kernel_host::settle(uint32_t seq) {
  // Woken by the call's end, the runner often takes the core before the
  // process gets back to waiting. Yielding lets it get there after short
  // calls; after a long one the scheduler (EEVDF) holds the process back
  // until it has waited its turn, so that the rest of its way back (tens
  // of microseconds on the development VM, now and then milliseconds) ran
  // later, within the other kernel's calls, and counted as this process's
  // work between calls. Sleeping, the runner leaves it the core.
  ::sched_yield();
  long nap_ns = 2'000;
  for (int64_t slept = 0; slept < settle_limit_ns;) {
    if (control_->parked.load(std::memory_order_acquire) == seq)
      return;
    timespec nap{0, nap_ns};
    ::nanosleep(&nap, nullptr);
    slept += nap_ns;
    nap_ns = std::min(nap_ns * 2, 1'000'000L);
  }
}

host_call kernel_host::post(uint32_t op) {
  host_call result;
  // The empty calls count too: their round trip is taken off every sample.
  const bool watching = watched_ != nullptr && op != host_control::map;
  auto other0 = watching ? watched_->cpu_now() : 0;
  auto cpu0 = cpu_now();
  auto idle = cpu0 - last_cpu_;
  idle_cpu_ns_ += idle;
  largest_idle_ns_ = std::max(largest_idle_ns_, idle);
  if (idle > busy_gap_ns)
    ++busy_gaps_;
  control_->op = op;
  auto seq = ++seq_;
  // The process waits for its call: its schedstat is settled. At the end
  // it is back to waiting, or it waits for the core the runner holds, a
  // wait not yet counted: the wait read is the call's.
  auto runner0 = thread_cpu_ns();
  auto sched0 = sched_.read();
  auto runner_sched0 = runner_sched_.read();
  auto t0 = steady_ns();
  control_->go.store(seq, std::memory_order_release);
  futex_wake(control_->go);
  auto failed = wait_done(seq);
  auto t1 = steady_ns();
  auto runner_sched1 = runner_sched_.read();
  auto sched1 = sched_.read();
  auto cpu_at_end = cpu_now();
  auto runner_ns = thread_cpu_ns() - runner0;
  if (!failed.empty()) {
    result.error = "the " + role_ + "'s process " + failed + " during a call";
    return result;
  }
  settle(seq);
  // A kernel's process stopped for a while (SIGSTOP, then SIGCONT) uses no
  // CPU time, so no hidden-work check sees it; its parent does.
  for (auto* host : {this, watched_})
    if (host != nullptr)
      if (auto stopped = stop_seen(host->pid_); !stopped.empty()) {
        result.error = "the " + host->role_ + "'s process " + stopped
                       + " during the evaluation";
        if (host->role_ == "baseline")
          result.status = eval_status::rejected;
        return result;
      }
  auto cpu1 = cpu_now();
  if (cpu0 < 0 || cpu1 < 0) {
    result.error = "cannot read the CPU clock of the " + role_ + "'s process";
    return result;
  }
  last_cpu_ = cpu1;
  result.wall_ns = t1 - t0;
  result.cpu_ns = cpu1 - cpu0;
  // Two waits hold the time other tasks had the core, and each is taken
  // at its least:
  // - the process's wait, less what its other threads ran (it starts no
  //   processes) and the runner's own part of the round trip (posting,
  //   waking, waiting), which shares the core: the process waits for it
  //   when its wake-up does not preempt the runner (about 2 us of an
  //   empty call, then, on the development VM), and an empty call's round
  //   trip, taken off every sample, holds it;
  // - the runner's wait, less all the process ran: mostly the kernel's
  //   wake-up preempts the runner, which then waits until the call has
  //   ended, and for other tasks after that, a wait the process's misses.
  // Both count other tasks' time, some of it twice: the larger is taken.
  auto process_ns = cpu_at_end < 0 ? result.wall_ns : cpu_at_end - cpu0;
  auto own_ns = sched0.ran_ns < 0 || sched1.ran_ns < 0
                  ? result.wall_ns
                  : process_ns - (sched1.ran_ns - sched0.ran_ns);
  result.others_ns = std::min(result.wall_ns,
    std::max(others_time_ns(sched0, sched1, own_ns + runner_ns),
      others_time_ns(runner_sched0, runner_sched1, process_ns)));
  if (watching) {
    auto other1 = watched_->cpu_now();
    if (other0 < 0 || other1 < 0) {
      result.error
        = "cannot read the CPU clock of the " + watched_->role_ + "'s process";
      return result;
    }
    auto& d = watched_->during_other_;
    d.cpu_ns += other1 - other0;
    d.largest_ns = std::max(d.largest_ns, other1 - other0);
    ++d.calls;
    d.wall_ns += result.wall_ns;
    if (other1 - other0 > busy_gap_ns)
      ++d.busy_calls;
  }
  // Mapping the arena is no call: counted, its tens of milliseconds would
  // raise the candidate's allowance for work between calls (a share of its
  // CPU time in calls, worked_between_calls in harness.cpp).
  if (op != host_control::map) {
    ++calls_;
    call_cpu_ns_ += result.cpu_ns;
  }
  return result;
}

host_call kernel_host::call(
  const problem& p, const void* const* inputs, void* const* outputs) {
  if (p.inputs().size() > host_control::max_buffers
      || p.outputs().size() > host_control::max_buffers
      || p.dims().size() > host_control::max_dims) {
    host_call result;
    result.error = "a call of more than "
                   + std::to_string(host_control::max_buffers)
                   + " buffers or dimensions cannot be posted to the " + role_
                   + "'s process";
    return result;
  }
  auto& c = *control_;
  const auto* name = p.kind_name();
  std::strncpy(c.kind, name, sizeof(c.kind) - 1);
  c.inputs = static_cast<uint32_t>(p.inputs().size());
  c.outputs = static_cast<uint32_t>(p.outputs().size());
  c.dims = static_cast<uint32_t>(p.dims().size());
  for (uint32_t i = 0; i < c.inputs; ++i)
    c.input[i] = inputs[i];
  for (uint32_t i = 0; i < c.outputs; ++i)
    c.output[i] = outputs[i];
  for (uint32_t i = 0; i < c.dims; ++i)
    c.dim[i] = p.dims()[i];
  return post(host_control::call);
}

host_call kernel_host::call_nothing() {
  return post(host_control::nothing);
}

host_call kernel_host::map_arena() {
  control_->map_from = arena_.base();
  control_->map_bytes = arena_.used_bytes();
  return post(host_control::map);
}

} // namespace eat::devices
