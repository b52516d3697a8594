#include "devices/runner/sandbox.hpp"

#include "devices/cpu_device.hpp"
#include "devices/runner/cgroups.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/drop_root.hpp"
#include "devices/runner/orphans.hpp"
#include "devices/runner/pid_namespace.hpp"
#include "devices/runner/seccomp_filter.hpp"
#include "devices/runner/user_namespace.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace eat::devices {

namespace fs = std::filesystem;

namespace {

std::string set_limit(
  int resource, const char* name, rlim_t soft, rlim_t hard) {
  rlimit lim{soft, hard};
  if (::setrlimit(resource, &lim) != 0)
    return std::string{"setrlimit("} + name + "): " + std::strerror(errno);
  return {};
}

/// `own_user_namespace`: the runner made a user namespace of its own,
/// where RLIMIT_NPROC counts only that namespace's tasks (the waiter, init,
/// the worker and whatever the kernel starts), and where the machine's
/// other users' processes all show the overflow user id in /proc.
std::string apply_limits(
  const runner_limits& limits, sandboxed who, bool own_user_namespace) {
  constexpr rlim_t mib = rlim_t{1} << 20;
  auto as = static_cast<rlim_t>(limits.address_space_mib) * mib;
  auto fsize = static_cast<rlim_t>(limits.file_size_mib) * mib;
  auto cpu = static_cast<rlim_t>(limits.cpu_s);
  auto nproc = static_cast<rlim_t>(
    (own_user_namespace ? 3 : user_task_count()) + limits.extra_tasks);
  // RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL one second later.
  for (auto err : {set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0),
         set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", fsize, fsize),
         set_limit(RLIMIT_CPU, "RLIMIT_CPU", cpu, cpu + 1),
         set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", nproc, nproc)})
    if (!err.empty())
      return err;
  if (who == sandboxed::gpu_runner)
    return {};
  return set_limit(RLIMIT_AS, "RLIMIT_AS", as, as);
}

/// Pins the process (its only thread, whose mask the kernel's threads and
/// processes inherit) to `core`.
std::string pin(int32_t core) {
  if (core < 0 || core >= CPU_SETSIZE)
    return "core " + std::to_string(core) + " is out of range";
  if (auto why = pin_thread({core}); !why.empty())
    return "cannot pin to core " + std::to_string(core) + ": " + why;
  return {};
}

/// The real user id of process `dir` (/proc/<pid>), which RLIMIT_NPROC
/// counts by; the directory's owner is root for a non-dumpable process.
std::optional<uid_t> real_uid_of(const fs::path& dir) {
  std::ifstream in{dir / "status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Uid:", 0) == 0)
      return static_cast<uid_t>(std::strtoul(line.c_str() + 4, nullptr, 10));
  return std::nullopt;
}

} // namespace

uint64_t user_task_count() {
  auto uid = ::getuid();
  uint64_t count = 0;
  std::error_code ec;
  for (fs::directory_iterator it{"/proc", ec}, end; !ec && it != end;
       it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != name.npos
        || real_uid_of(it->path()) != uid)
      continue;
    std::error_code task_ec;
    for (fs::directory_iterator task{it->path() / "task", task_ec};
         !task_ec && task != end; task.increment(task_ec))
      ++count;
  }
  return count;
}

sandbox_report apply_sandbox(const runner_limits& limits, int32_t core,
  sandboxed who, const std::vector<std::string*>& code) {
  sandbox_report report;
  // posix_spawn already made us a session leader without a terminal;
  // repeat it for a runner started by other means. Errors only mean
  // "already a group leader" (then at least a group of its own).
  if (::setsid() < 0) {
    ::setpgid(0, 0);
    int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (tty >= 0) {
      ::ioctl(tty, TIOCNOTTY);
      ::close(tty);
    }
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Descriptors the parent leaked (store, lock files) are not the kernel's.
  ::close_range(runner_reply_fd + 1, ~0U, 0);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    report.error = std::string{"PR_SET_NO_NEW_PRIVS: "} + std::strerror(errno);
    return report;
  }
  if (who == sandboxed::gpu_runner)
    ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  // Not root: the namespaces below need a user namespace of its own
  // (where user namespaces are allowed, and unless the limits say no: a
  // GPU runtime that cannot work in one).
  bool own_user_namespace = false;
  if (limits.user_namespace && ::geteuid() != 0) {
    auto user_ns = enter_user_namespace();
    if (report.error = user_ns.error; !report.error.empty())
      return report;
    own_user_namespace = user_ns.entered;
  }
  report.user_namespace = own_user_namespace;
  // Without privileges (EPERM) the network stays reachable; the reply says.
  report.network_isolated = ::unshare(CLONE_NEWNET) == 0;
  // Likewise: the cgroup's cap counts the namespace's init, this process
  // (the waiter, which leaves the cgroup at the end) and the worker.
  auto pids_cg = enter_pids_cgroup(3 + limits.extra_tasks);
  report.tasks_capped = !pids_cg.dir.empty();
  // Likewise: the CPU time of every process of the evaluation.
  auto cpu_cg = enter_cpu_cgroup(pids_cg);
  // Likewise; from here on this is the namespace's worker process.
  auto pids = enter_pid_namespace({pids_cg, cpu_cg});
  if (report.error = pids.error; !report.error.empty())
    return report;
  report.pid_isolated = pids.isolated;
  if (!pids.isolated)
    report.orphans_adopted = adopt_orphans();
  if (!cpu_cg.dir.empty()) {
    count_cpu_in_cgroup(cpu_time_file(cpu_cg), cpu_cg.v2);
    report.cgroup_cpu_time = true;
  }
  if (report.error = pin(core); !report.error.empty())
    return report;
  report.core = core;
  // Kernel code gets none of the capabilities the user namespace gave,
  // and, non-dumpable, cannot be traced by other evaluations' kernels
  // running as the same user (as a root runner's worker after drop_root).
  if (own_user_namespace) {
    if (report.error = drop_capabilities(); !report.error.empty())
      return report;
    ::prctl(PR_SET_DUMPABLE, 0);
  }
  // Before the limits: RLIMIT_NPROC counts the tasks of the user the
  // kernel runs as. A GPU runner switches later, once its runtime has
  // opened the GPU (switch_kernel_user).
  if (who == sandboxed::cpu_runner) {
    report.error = drop_root(limits.run_as_uid, limits.run_as_gid, code);
    if (!report.error.empty())
      return report;
  }
  report.kernel_uid = ::getuid();
  report.error = apply_limits(limits, who, own_user_namespace);
  // Last: no process of a kernel leaves the group the deadline kills.
  if (report.error.empty())
    if (auto why = keep_in_process_group(); !why.empty())
      report.error = "cannot keep kernels in the process group: " + why;
  return report;
}

std::string switch_kernel_user(
  const runner_limits& limits, const std::vector<std::string*>& code) {
  const auto before = ::getuid();
  if (auto why = drop_root(limits.run_as_uid, limits.run_as_gid, code);
      !why.empty())
    return why;
  if (::getuid() == before)
    return {};
  // apply_sandbox counted root's tasks, whom RLIMIT_NPROC does not bind;
  // now it binds, and counts the new user's (the runtime's threads among
  // them).
  auto nproc = static_cast<rlim_t>(user_task_count() + limits.extra_tasks);
  return set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", nproc, nproc);
}

} // namespace eat::devices
