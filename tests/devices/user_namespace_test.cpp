// Specification of the sandbox of a runner that is not root
// (devices/runner/user_namespace.hpp, devices/runner/sandbox.hpp): in a user
// namespace of its own it gets the network and PID namespaces that root
// gets, keeps its user id, gives kernel code no capability (so that it
// cannot trace the namespace's init or waiter, its own user's), and its
// RLIMIT_NPROC counts the evaluation's tasks alone. A stand-in for the
// runner, forked and (when this test runs as root) switched to a user id of
// no account, calls apply_sandbox as eat-runner does and reports on the
// reply descriptor. A GPU runner's sandbox makes the same namespaces,
// unless its device's user_namespace is off. Where user namespaces are not
// allowed, or their ids cannot be mapped, the process stays out of them.

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/checks.hpp"
#include "devices/runner/sandbox.hpp"
#include "devices/runner/user_namespace.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// The CapEff line of /proc/self/status.
std::string effective_capabilities() {
  std::ifstream in{"/proc/self/status"};
  for (std::string line; std::getline(in, line);)
    if (line.rfind("CapEff:", 0) == 0)
      return line.substr(line.find_first_not_of(" \t", 7));
  return "?";
}

/// What the stand-in saw, one field a line.
struct seen {
  std::string error;
  bool network_isolated = false;
  bool pid_isolated = false;
  long uid = -1;
  std::string capabilities;
  bool unshare_refused = false;
  int64_t helper_work_seen = -1;
  long forked = -1;
  bool init_untraceable = false;
  bool waiter_memory_closed = false;
};

constexpr int64_t helper_work = 40'000'000;

/// In the sandboxed worker: starts a helper with CLONE_PARENT, which the
/// namespace's init reaps, lets it work `helper_work` ns of CPU time, and
/// returns how much of it the hidden-work check counts (without a cgroup:
/// getrusage and what init reaped). Init publishes right after its reap,
/// so the figure is polled until it shows the work, for at most 10 s.
int64_t helper_work_seen() {
  auto before = other_cpu_now();
  auto pid = static_cast<pid_t>(::syscall(
    SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (pid == 0) {
    spin_for_cpu(helper_work);
    ::_exit(0);
  }
  while (pid > 0 && ::kill(pid, 0) == 0)
    ::sched_yield();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  int64_t seen = 0;
  do
    seen = other_cpu_between(before, other_cpu_now());
  while (seen < helper_work && std::chrono::steady_clock::now() < deadline);
  return seen;
}

/// Runs the stand-in: becomes `uid` when root, applies the sandbox with 4
/// extra tasks, and reports.
seen sandboxed_stand_in(uid_t uid) {
  auto heard = in_child(
    [&]() -> std::string {
      if (!become_user(uid))
        return "cannot switch users\n";
      runner_limits limits;
      limits.address_space_mib = 1 << 20;
      limits.extra_tasks = 4;
      // The process that becomes the waiter, outside the namespace.
      const auto waiter = std::to_string(::getpid());
      auto report = apply_sandbox(limits, 0);
      auto hidden = report.pid_isolated ? helper_work_seen() : -1;
      std::ostringstream out;
      out << report.error << '\n'
          << report.network_isolated << '\n'
          << report.pid_isolated << '\n'
          << ::getuid() << '\n'
          << effective_capabilities() << '\n'
          << (::unshare(CLONE_NEWNET) != 0 && errno == EPERM) << '\n'
          << hidden << '\n';
      // Kernel code can neither trace the namespace's init nor write the
      // waiter's memory, though they run as its user.
      bool traced = ::ptrace(PTRACE_ATTACH, 1, nullptr, nullptr) == 0;
      if (traced)
        ::ptrace(PTRACE_DETACH, 1, nullptr, nullptr);
      int memory = ::open(("/proc/" + waiter + "/mem").c_str(), O_RDWR);
      if (memory >= 0)
        ::close(memory);
      out << !traced << '\n' << (memory < 0) << '\n';
      auto children = fork_sleepers(50);
      out << children.size() << '\n';
      if (!report.pid_isolated)
        end_sleepers(children);
      return out.str();
    },
    runner_reply_fd);
  std::istringstream in{heard};
  seen s;
  std::getline(in, s.error);
  in >> s.network_isolated >> s.pid_isolated >> s.uid;
  in.ignore();
  std::getline(in, s.capabilities);
  in >> s.unshare_refused >> s.helper_work_seen >> s.init_untraceable
    >> s.waiter_memory_closed >> s.forked;
  return s;
}

} // namespace

TEST_CASE("a runner that is not root gets a network and a PID namespace in "
          "a user namespace of its own, keeps its user id, leaves kernel "
          "code no capability, with which it could trace the namespace's "
          "init or waiter, and caps the evaluation's tasks") {
  auto uid = ::geteuid() == 0 ? unused_uid(54'322) : ::geteuid();
  auto s = sandboxed_stand_in(uid);
  INFO("error \"" << s.error << "\", uid " << s.uid << ", CapEff "
                  << s.capabilities << ", helper's work seen "
                  << s.helper_work_seen << " ns, forked " << s.forked);
  REQUIRE(s.error == "");
  if (!s.network_isolated) {
    WARN("no user namespace for an unprivileged process here");
    CHECK(!s.pid_isolated);
    return;
  }
  CHECK(s.pid_isolated);
  CHECK(s.uid == static_cast<long>(uid));
  CHECK(s.capabilities == "0000000000000000");
  CHECK(s.unshare_refused);
  // Reaped by init, not the worker: counted all the same.
  CHECK(s.helper_work_seen >= helper_work);
  // RLIMIT_NPROC = the namespace's waiter, init and worker + 4.
  CHECK(s.forked == 4);
  // Init and the waiter run as the kernel's user but keep the capabilities
  // the worker dropped, which the kernel would need to trace them: it
  // cannot stop init's reaping nor make the waiter, outside the namespace,
  // start a process that outlives the evaluation.
  CHECK(s.init_untraceable);
  CHECK(s.waiter_memory_closed);
}

TEST_CASE("enter_user_namespace keeps the caller's ids, and "
          "drop_capabilities leaves it unable to make namespaces") {
  auto uid = ::geteuid() == 0 ? unused_uid(54'322) : ::geteuid();
  auto said = in_child([&]() -> std::string {
    if (!become_user(uid))
      return "cannot switch users";
    if (auto ns = enter_user_namespace(); !ns.entered)
      return ns.error.empty() ? "unavailable: " + ns.why_not : ns.error;
    if (::getuid() != uid || ::getgid() != uid)
      return "ids changed";
    if (::unshare(CLONE_NEWNET) != 0)
      return "no network namespace in the user namespace";
    if (auto why = drop_capabilities(); !why.empty())
      return why;
    if (::unshare(CLONE_NEWNET) == 0 || errno != EPERM)
      return "a namespace made without capabilities";
    return "";
  });
  if (said.rfind("unavailable: ", 0) == 0) {
    WARN(said);
    return;
  }
  CHECK(said == "");
}

TEST_CASE("a process that is not dumpable stays out of a user namespace, "
          "which it could not map, and gains no capability") {
  if (::geteuid() != 0) {
    WARN("not root: no user to switch from");
    return;
  }
  auto uid = unused_uid(54'322);
  auto said = in_child([&]() -> std::string {
    // Switching users leaves a process non-dumpable.
    if (::setgroups(0, nullptr) != 0 || ::setresgid(uid, uid, uid) != 0
        || ::setresuid(uid, uid, uid) != 0)
      return "cannot switch users";
    auto ns = enter_user_namespace();
    if (ns.entered)
      return "entered";
    if (!ns.error.empty())
      return ns.error;
    if (::unshare(CLONE_NEWNET) == 0 || errno != EPERM)
      return "a network namespace without privileges";
    return ns.why_not;
  });
  CHECK(said == "the process is not dumpable");
}

TEST_CASE("where a user namespace's ids cannot be mapped, as under "
          "AppArmor's restriction, a process stays out of it") {
  // Ubuntu's kernel.apparmor_restrict_unprivileged_userns lets unshare
  // succeed and then refuses the id maps: the process could not go back,
  // and the runner stopped with an error. Here the maps are files of a
  // read-only tmpfs over /proc, in a mount namespace of the child's own.
  if (::geteuid() != 0) {
    WARN("not root: /proc cannot be covered");
    return;
  }
  auto said = in_child([]() -> std::string {
    struct stat before {};
    if (::stat("/proc/self/ns/user", &before) != 0)
      return "unavailable: no /proc";
    int proc = ::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0 || ::unshare(CLONE_NEWNS) != 0
        || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0
        || ::mount("none", "/proc", "tmpfs", 0, nullptr) != 0)
      return "unavailable: cannot cover /proc";
    ::mkdir("/proc/self", 0755);
    for (auto file : {"uid_map", "gid_map", "setgroups"})
      std::ofstream{std::string{"/proc/self/"} + file};
    if (::mount(nullptr, "/proc", nullptr, MS_REMOUNT | MS_RDONLY, nullptr)
        != 0)
      return "cannot make the maps read-only";
    auto ns = enter_user_namespace();
    struct stat after {};
    if (::fstatat(proc, "self/ns/user", &after, 0) != 0)
      return "cannot read its user namespace";
    if (ns.entered)
      return "entered";
    if (!ns.error.empty())
      return "error: " + ns.error;
    if (after.st_ino != before.st_ino)
      return "left its user namespace";
    return ns.why_not;
  });
  if (said.rfind("unavailable: ", 0) == 0) {
    WARN(said);
    return;
  }
  CHECK_THAT(said, Catch::StartsWith("its ids could not be mapped in a user "
                                     "namespace (/proc/self/uid_map: "));
}

namespace {

/// Runs apply_sandbox as a GPU runner does, as `uid` when root, with
/// runner_limits::user_namespace = `allowed`; says on one line each: the
/// error, whether it made a user namespace, the network and PID
/// namespaces, its uid, its effective capabilities and whether RLIMIT_AS
/// stayed unlimited (the GPU runtimes need the address space).
std::vector<std::string> gpu_stand_in(uid_t uid, bool allowed) {
  auto heard = in_child(
    [&]() -> std::string {
      if (!become_user(uid))
        return "cannot switch users\n";
      runner_limits limits;
      limits.extra_tasks = 4;
      limits.user_namespace = allowed;
      auto report = apply_sandbox(limits, 0, sandboxed::gpu_runner);
      rlimit as{};
      ::getrlimit(RLIMIT_AS, &as);
      std::ostringstream out;
      out << report.error << '\n'
          << report.user_namespace << '\n'
          << report.network_isolated << '\n'
          << report.pid_isolated << '\n'
          << ::getuid() << '\n'
          << effective_capabilities() << '\n'
          << (as.rlim_cur == RLIM_INFINITY) << '\n';
      return out.str();
    },
    runner_reply_fd);
  std::vector<std::string> lines;
  std::istringstream in{heard};
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  lines.resize(7);
  return lines;
}

} // namespace

TEST_CASE("a GPU runner that is not root gets its network and PID "
          "namespaces in a user namespace of its own too, unless the "
          "device's user_namespace is off") {
  auto uid = ::geteuid() == 0 ? unused_uid(54'322) : ::geteuid();
  auto on = gpu_stand_in(uid, true);
  INFO("error \"" << on[0] << "\", CapEff " << on[5]);
  REQUIRE(on[0] == "");
  CHECK(on[4] == std::to_string(uid));
  CHECK(on[6] == "1");
  if (!user_namespaces_allowed(uid)) {
    WARN("no user namespace for an unprivileged process here");
    CHECK(on[1] == "0");
    CHECK(on[2] == "0");
    return;
  }
  CHECK(on[1] == "1");
  CHECK(on[2] == "1");
  CHECK(on[3] == "1");
  CHECK(on[5] == "0000000000000000");
  auto off = gpu_stand_in(uid, false);
  REQUIRE(off[0] == "");
  CHECK(off[1] == "0");
  CHECK(off[2] == "0");
  CHECK(off[3] == "0");
  CHECK(off[4] == std::to_string(uid));
}
