// Specification of the runner's cgroups (devices/runner/cgroups.hpp): the
// pids cgroup, a cap on an evaluation's tasks that holds for root, whom
// RLIMIT_NPROC does not limit, and the CPU-time cgroup, which counts the
// CPU time of every process of the evaluation for the hidden-work check.
// Each case forks a stand-in for the runner, which enters the cgroups (and
// the PID namespace) as eat-runner does and reports what it saw on a pipe.
// Making a cgroup needs a writable cgroup file system (root, as in CI);
// without one a case says why and ends.

#include <cerrno>
#include <csignal>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/cgroups.hpp"
#include "devices/runner/checks.hpp"
#include "devices/runner/pid_namespace.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;
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
      for (auto child : children)
        ::kill(child, SIGKILL);
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

} // namespace

TEST_CASE("the CPU-time cgroup counts the work of a grandchild that escaped "
          "with setsid and a double fork and was reaped by the namespace's "
          "init, which getrusage misses, and none of the caller's own") {
  constexpr int64_t grandchild_work = 40'000'000;
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t runner = ::fork();
  REQUIRE(runner >= 0);
  if (runner == 0) {
    ::close(pipe_fds[0]);
    auto pids_cg = enter_pids_cgroup(3 + 4);
    auto cpu_cg = enter_cpu_cgroup(pids_cg);
    send(pipe_fds[1], cpu_cg.dir);
    send(pipe_fds[1], cpu_cg.why_not);
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
  report r;
  r.dir = receive(pipe_fds[0]);
  r.why_not = receive(pipe_fds[0]);
  auto no_namespace = receive(pipe_fds[0]);
  std::vector<std::string> figures;
  for (int i = 0; i < 4; ++i)
    figures.push_back(receive(pipe_fds[0]));
  ::close(pipe_fds[0]);
  wait_status(runner);
  if (unavailable(r))
    return;
  INFO("cgroup " << r.dir);
  if (!no_namespace.empty()) {
    WARN(no_namespace);
    return;
  }
  CHECK(figures[0].empty()); // no read failed
  REQUIRE(!figures[3].empty());
  auto own = std::stoll(figures[1]);
  auto hidden = std::stoll(figures[2]);
  auto by_rusage = std::stoll(figures[3]);
  INFO("own " << own << " ns, hidden " << hidden << " ns, getrusage "
              << by_rusage << " ns");
  CHECK(own < 1'000'000);
  CHECK(hidden >= grandchild_work);
  CHECK(by_rusage < grandchild_work / 4);
  CHECK(!exists(r.dir));
}
