// Specification of the runner's cgroups (devices/runner/cgroups.hpp): the
// pids cgroup, a cap on an evaluation's tasks that holds for root, whom
// RLIMIT_NPROC does not limit, and the CPU-time cgroup, which counts the
// CPU time of every process of the evaluation for the hidden-work check.
// Each case forks a stand-in for the runner, which enters the cgroups (and
// the PID namespace) as eat-runner does and reports what it saw on a pipe.
// Making a cgroup needs a writable cgroup file system (root, as in CI);
// without one a case says why and ends. Where cgroup v1's hierarchies are
// mounted beside v2's (this development machine), one case hides them in a
// mount namespace of its own to try the v2 path too.

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/cgroups.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/pid_namespace.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;
using eat::devices::test::end_sleepers;
using eat::devices::test::fork_sleepers;
using eat::devices::test::spin_for_cpu;

namespace {

/// The stand-in's report: the cgroup's directory (or why there is none)
/// and how many children it could fork.
struct report {
  std::string dir;
  std::string why_not;
  int forked = -1;
};

void send(int fd, const std::string& text) {
  auto size = static_cast<uint32_t>(text.size());
  (void) !::write(fd, &size, sizeof(size));
  (void) !::write(fd, text.data(), text.size());
}

std::string receive(int fd) {
  uint32_t size = 0;
  if (::read(fd, &size, sizeof(size)) != sizeof(size))
    return {};
  std::string text(size, '\0');
  size_t got = 0;
  while (got < size) {
    auto n = ::read(fd, text.data() + got, size - got);
    if (n <= 0)
      break;
    got += static_cast<size_t>(n);
  }
  return text;
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ; // retry
  return status;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// True (with a warning) where no cgroup could be made.
bool unavailable(const report& r) {
  if (!r.dir.empty())
    return false;
  WARN("no cgroup here (uid " << ::getuid() << "): " << r.why_not);
  CHECK(!r.why_not.empty());
  return true;
}

} // namespace

TEST_CASE("a runner in its pids cgroup forks no more tasks than the cap, "
          "and the cgroup is removed when the runner ends") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t runner = ::fork();
  REQUIRE(runner >= 0);
  if (runner == 0) {
    ::close(pipe_fds[0]);
    // The waiter, init and the worker, and 4 more.
    auto cg = enter_pids_cgroup(3 + 4);
    send(pipe_fds[1], cg.dir);
    send(pipe_fds[1], cg.why_not);
    if (cg.dir.empty())
      ::_exit(0);
    auto ns = enter_pid_namespace({cg});
    auto children = fork_sleepers(50);
    // Without the namespace (no privileges for it) the stand-in itself
    // and its children are the cgroup's only tasks, and the children are
    // killed here.
    auto forked = static_cast<int>(children.size());
    send(pipe_fds[1], std::to_string(ns.isolated ? forked : forked - 2));
    if (!ns.isolated)
      end_sleepers(children);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  report r;
  r.dir = receive(pipe_fds[0]);
  r.why_not = receive(pipe_fds[0]);
  auto forked = receive(pipe_fds[0]);
  ::close(pipe_fds[0]);
  wait_status(runner);
  if (unavailable(r))
    return;
  INFO("cgroup " << r.dir);
  REQUIRE(!forked.empty());
  CHECK(std::stoi(forked) == 4);
  CHECK(!exists(r.dir));
}

TEST_CASE("the cgroup of a runner killed before it could leave is removed "
          "by the next runner") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t killed = ::fork();
  REQUIRE(killed >= 0);
  if (killed == 0) {
    auto cg = enter_pids_cgroup(8);
    send(pipe_fds[1], cg.dir);
    send(pipe_fds[1], cg.why_not);
    ::raise(SIGKILL);
  }
  report first;
  first.dir = receive(pipe_fds[0]);
  first.why_not = receive(pipe_fds[0]);
  int status = wait_status(killed);
  CHECK(WIFSIGNALED(status));
  if (unavailable(first))
    return;
  INFO("cgroup " << first.dir);
  CHECK(exists(first.dir));
  pid_t next = ::fork();
  REQUIRE(next >= 0);
  if (next == 0) {
    auto cg = enter_pids_cgroup(8);
    send(pipe_fds[1], cg.dir);
    send(pipe_fds[1], leave_cgroup(cg));
    ::_exit(0);
  }
  auto second = receive(pipe_fds[0]);
  auto left = receive(pipe_fds[0]);
  wait_status(next);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  CHECK(!exists(first.dir));
  CHECK(!second.empty());
  CHECK(left.empty());
  CHECK(!exists(second));
}

TEST_CASE("a CPU-time file's text gives its CPU time in ns") {
  CHECK(parse_cgroup_cpu_ns("123456789\n", false) == 123456789);
  CHECK(parse_cgroup_cpu_ns("usage_usec 1500\nuser_usec 1000\n"
                            "system_usec 500\n",
          true)
        == 1'500'000);
  CHECK(parse_cgroup_cpu_ns("user_usec 1000\nusage_usec 7\n", true) == 7000);
  CHECK(parse_cgroup_cpu_ns("", false) == -1);
  CHECK(parse_cgroup_cpu_ns("garbage", false) == -1);
  CHECK(parse_cgroup_cpu_ns("user_usec 1000\n", true) == -1);
  CHECK(parse_cgroup_cpu_ns("-5\n", false) == -1);
}

namespace {

/// CPU time of this process's other threads and reaped children as the
/// worker's getrusage sees them (without what init reaped).
int64_t rusage_others_ns() {
  return process_cpu_ns() + reaped_children_cpu_ns() - thread_cpu_ns();
}

/// Mounts a stand-in sees: the host's, or only cgroup v2's hierarchy.
enum class mounts { host, v2_only };

/// In a mount namespace of the caller's own, detaches every cgroup v1
/// hierarchy, so that cgroup v2 alone is left, as on a machine with the
/// unified hierarchy only. Returns why not, or an empty string.
std::string hide_cgroup_v1() {
  if (::unshare(CLONE_NEWNS) != 0)
    return std::string{"unshare(CLONE_NEWNS): "} + std::strerror(errno);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return std::string{"making mounts private: "} + std::strerror(errno);
  std::vector<std::string> v1;
  bool v2 = false;
  std::ifstream in{"/proc/self/mountinfo"};
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields{line};
    std::string field, point;
    for (int i = 0; i < 5 && fields >> field; ++i)
      point = field;
    while (fields >> field && field != "-")
      ; // optional fields
    fields >> field;
    if (field == "cgroup")
      v1.push_back(point);
    v2 = v2 || field == "cgroup2";
  }
  if (!v2)
    return "no cgroup v2 hierarchy mounted";
  for (const auto& point : v1)
    if (::umount2(point.c_str(), MNT_DETACH) != 0)
      return "detaching " + point + ": " + std::strerror(errno);
  return {};
}

/// What the escaped-grandchild stand-in saw.
struct escaped_work {
  report cgroup;
  /// Why the case cannot run here (no v2 alone, no PID namespace).
  std::string not_here;
  bool v2 = false;
  /// A failed read of the CPU-time file; the figures (ns; -1 when not
  /// sent).
  std::string read_error;
  int64_t own = -1;
  int64_t hidden = -1;
  int64_t by_rusage = -1;
};

constexpr int64_t grandchild_work = 40'000'000;

/// A stand-in for the runner enters its cgroups and PID namespace, spins
/// 30 ms itself, then forks a child that leaves with setsid and forks a
/// grandchild that works `grandchild_work` ns and is reaped by the
/// namespace's init: what the hidden-work check counted of each, and what
/// getrusage did.
escaped_work escaped_grandchild(mounts seen) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t runner = ::fork();
  REQUIRE(runner >= 0);
  if (runner == 0) {
    ::close(pipe_fds[0]);
    auto hidden_v1 = seen == mounts::v2_only ? hide_cgroup_v1() : "";
    send(pipe_fds[1], hidden_v1);
    if (!hidden_v1.empty())
      ::_exit(0);
    auto pids_cg = enter_pids_cgroup(3 + 4);
    auto cpu_cg = enter_cpu_cgroup(pids_cg);
    send(pipe_fds[1], cpu_cg.dir);
    send(pipe_fds[1], cpu_cg.why_not);
    send(pipe_fds[1], cpu_cg.v2 ? "v2" : "v1");
    if (cpu_cg.dir.empty())
      ::_exit(0);
    auto ns = enter_pid_namespace({pids_cg, cpu_cg});
    send(pipe_fds[1], ns.isolated ? "" : "no PID namespace here");
    if (!ns.isolated)
      ::_exit(0);
    count_cpu_in_cgroup(cpu_time_file(cpu_cg), cpu_cg.v2);
    auto start = other_cpu_now();
    spin_for_cpu(30'000'000);
    auto own = other_cpu_between(start, other_cpu_now());
    auto before = other_cpu_now();
    auto rusage_before = rusage_others_ns();
    int ids[2];
    (void) !::pipe(ids);
    pid_t child = ::fork();
    if (child == 0) {
      ::setsid();
      pid_t grandchild = ::fork();
      if (grandchild == 0) {
        spin_for_cpu(grandchild_work);
        ::_exit(0);
      }
      (void) !::write(ids[1], &grandchild, sizeof(grandchild));
      ::_exit(0);
    }
    wait_status(child);
    pid_t grandchild = 0;
    (void) !::read(ids[0], &grandchild, sizeof(grandchild));
    // Until init has reaped it: its CPU time is then final.
    while (::kill(grandchild, 0) == 0)
      ::sched_yield();
    auto hidden = other_cpu_between(before, other_cpu_now());
    auto by_rusage = rusage_others_ns() - rusage_before;
    send(pipe_fds[1], start.error + other_cpu_now().error);
    send(pipe_fds[1], std::to_string(own));
    send(pipe_fds[1], std::to_string(hidden));
    send(pipe_fds[1], std::to_string(by_rusage));
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  escaped_work w;
  auto next = [&] {
    return receive(pipe_fds[0]);
  };
  w.not_here = next();
  if (w.not_here.empty()) {
    w.cgroup.dir = next();
    w.cgroup.why_not = next();
    w.v2 = next() == "v2";
    if (!w.cgroup.dir.empty())
      w.not_here = next();
    if (!w.cgroup.dir.empty() && w.not_here.empty()) {
      w.read_error = next();
      for (auto* figure : {&w.own, &w.hidden, &w.by_rusage})
        if (auto text = next(); !text.empty())
          *figure = std::stoll(text);
    }
  }
  ::close(pipe_fds[0]);
  wait_status(runner);
  return w;
}

/// The checks of both cases: the grandchild's work counted, the caller's
/// own not, getrusage blind to it, and the cgroup gone afterwards.
void check_escaped_work_counted(const escaped_work& w) {
  INFO("cgroup " << w.cgroup.dir << ", own " << w.own << " ns, hidden "
                 << w.hidden << " ns, getrusage " << w.by_rusage << " ns");
  CHECK(w.read_error.empty());
  REQUIRE(w.by_rusage != -1); // every figure came
  CHECK(w.own < 1'000'000);
  CHECK(w.hidden >= grandchild_work);
  CHECK(w.by_rusage < grandchild_work / 4);
  CHECK(!exists(w.cgroup.dir));
}

} // namespace

TEST_CASE("the CPU-time cgroup counts the work of a grandchild that escaped "
          "with setsid and a double fork and was reaped by the namespace's "
          "init, which getrusage misses, and none of the caller's own") {
  auto w = escaped_grandchild(mounts::host);
  if (unavailable(w.cgroup))
    return;
  if (!w.not_here.empty()) {
    WARN(w.not_here);
    return;
  }
  check_escaped_work_counted(w);
}

TEST_CASE("where cgroup v2 alone is mounted, the CPU-time cgroup is a v2 "
          "cgroup, whose cpu.stat counts the escaped grandchild's work the "
          "same") {
  auto w = escaped_grandchild(mounts::v2_only);
  if (!w.not_here.empty() || unavailable(w.cgroup)) {
    WARN("cgroup v2 alone cannot be tried here: " << w.not_here);
    return;
  }
  CHECK(w.v2);
  CHECK_THAT(w.cgroup.dir, Catch::Contains("/eat-runner."));
  check_escaped_work_counted(w);
}
