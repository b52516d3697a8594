// Specification of the runner's PID namespace (devices/runner/
// pid_namespace.hpp) and of the process check that relies on it
// (has_child_processes, devices/runner/checks.hpp). Each case forks a
// stand-in for the runner, which enters the namespace as eat-runner does
// and reports what it saw in its exit status. Making the namespace needs
// privileges (root, as in CI); without them a case says so and ends.

#include <csignal>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/checks.hpp"
#include "devices/runner/pid_namespace.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;

namespace {

/// Exit status of a stand-in whose namespace could not be made.
constexpr int no_namespace = 10;

/// Forks a stand-in runner that enters a PID namespace and then runs
/// `worker` there (which must end the process); returns its wait status.
template <class Worker>
int run_in_namespace(Worker worker) {
  pid_t runner = ::fork();
  REQUIRE(runner >= 0);
  if (runner == 0) {
    auto ns = enter_pid_namespace();
    if (!ns.isolated)
      ::_exit(no_namespace);
    worker();
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(runner, &status, 0) < 0 && errno == EINTR)
    ; // retry
  return status;
}

/// True (with a warning) where this process may not make PID namespaces.
bool unprivileged(int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == no_namespace) {
    WARN("unshare(CLONE_NEWPID) is not permitted here (uid "
         << ::getuid() << ")");
    CHECK(::geteuid() != 0);
    return true;
  }
  return false;
}

} // namespace

TEST_CASE("the runner ends as its namespace's worker did: its exit status "
          "or its signal") {
  int exited = run_in_namespace([] { ::_exit(7); });
  if (unprivileged(exited))
    return;
  REQUIRE(WIFEXITED(exited));
  CHECK(WEXITSTATUS(exited) == 7);
  // The worker is not the namespace's init, so a signal it raises itself
  // is not ignored.
  int killed = run_in_namespace([] { ::raise(SIGUSR1); });
  REQUIRE(WIFSIGNALED(killed));
  CHECK(WTERMSIG(killed) == SIGUSR1);
}

TEST_CASE("in its namespace the worker sees a grandchild that escaped with "
          "setsid, and the namespace's end kills it") {
  int host_pid[2];
  REQUIRE(::pipe(host_pid) == 0);
  int status = run_in_namespace([&] {
    if (!in_own_pid_namespace())
      ::_exit(11);
    if (has_child_processes())
      ::_exit(12);
    int ready[2];
    if (::pipe(ready) != 0)
      ::_exit(13);
    pid_t child = ::fork();
    if (child == 0) {
      ::setsid();
      if (::fork() == 0) {
        // The grandchild: its pid as this test sees it, then sleep (at
        // most 60 s, should the namespace fail to end it).
        char buf[32];
        auto n = ::readlink("/proc/self", buf, sizeof(buf));
        (void) ::write(host_pid[1], buf, n > 0 ? static_cast<size_t>(n) : 0);
        (void) ::write(ready[1], "x", 1);
        ::alarm(60);
        for (;;)
          ::pause();
      }
      ::_exit(0);
    }
    char x;
    (void) ::read(ready[0], &x, 1);
    ::waitpid(child, nullptr, 0);
    // No child is left, but the grandchild lives.
    ::_exit(has_child_processes() ? 42 : 14);
  });
  ::close(host_pid[1]);
  if (unprivileged(status))
    return;
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 42);
  char buf[32] = {};
  auto n = ::read(host_pid[0], buf, sizeof(buf) - 1);
  ::close(host_pid[0]);
  REQUIRE(n > 0);
  int grandchild = std::stoi(std::string(buf, static_cast<size_t>(n)));
  INFO("grandchild " << grandchild);
  CHECK(test::process_gone(grandchild));
}

TEST_CASE("outside a runner's namespace only this process's children count "
          "as child processes") {
  CHECK_FALSE(in_own_pid_namespace());
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0)
    ::_exit(0);
  // Exited but not reaped: still a child.
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT)
          == 0);
  CHECK(has_child_processes());
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  // The machine's other processes do not count.
  CHECK_FALSE(has_child_processes());
}

TEST_CASE("in its namespace the worker counts every thread and process "
          "started there even once it has ended and outside one it counts "
          "nothing") {
  CHECK(last_pid_given() == -1);
  int status = run_in_namespace([] {
    auto before = last_pid_given();
    if (before < 2)
      ::_exit(11);
    std::thread{[] {}}.join();
    if (last_pid_given() != before + 1)
      ::_exit(12);
    pid_t child = ::fork();
    if (child == 0)
      ::_exit(0);
    ::waitpid(child, nullptr, 0);
    ::_exit(last_pid_given() == before + 2 ? 42 : 13);
  });
  if (unprivileged(status))
    return;
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 42);
}
