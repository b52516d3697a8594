// Specification of a runner without a PID namespace of its own
// (devices/runner/orphans.hpp): it adopts the processes its kernels leave
// behind with setsid() and a double fork, sees them as its children, and
// kills them, and whatever they started, before it replies. Each case runs
// in a forked stand-in, which may become a subreaper for good.

#include <cerrno>
#include <csignal>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/checks.hpp"
#include "devices/runner/orphans.hpp"
#include "devices/runner/sandbox.hpp"
#include "devices/runner_protocol.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Sleeps until killed, holding no descriptor of the test's pipes.
[[noreturn]] void sleep_forever() {
  ::close_range(3, ~0U, 0);
  for (;;)
    ::pause();
}

/// Starts a sleeper that leaves the process group with setsid() and whose
/// parent ends at once (a kernel's escape from the group kill), and
/// returns its pid once its parent has been reaped: it has been handed to
/// a subreaper, or to init, by then.
pid_t start_escaped_sleeper() {
  int fds[2];
  if (::pipe(fds) != 0)
    return -1;
  pid_t middle = ::fork();
  if (middle == 0) {
    ::setsid();
    pid_t sleeper = ::fork();
    if (sleeper == 0)
      sleep_forever();
    (void)!::write(fds[1], &sleeper, sizeof(sleeper));
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t sleeper = -1;
  (void)!::read(fds[0], &sleeper, sizeof(sleeper));
  ::close(fds[0]);
  ::waitpid(middle, nullptr, 0);
  return sleeper;
}

/// Whether `pid` is gone and reaped: stricter than process_gone
/// (tests/devices/test_support.hpp), which counts a zombie as gone, so
/// that a child end_children killed but did not reap fails the case.
bool gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

} // namespace

TEST_CASE("without a subreaper, a process that left with setsid() and a "
          "double fork is no child of the runner's") {
  auto said = in_child([]() -> std::string {
    auto sleeper = start_escaped_sleeper();
    if (sleeper <= 0)
      return "cannot start the sleeper";
    bool seen = has_child_processes();
    ::kill(sleeper, SIGKILL); // init reaps it
    return seen ? "seen" : "";
  });
  CHECK(said == "");
}

TEST_CASE("a runner that adopts orphans sees a process that left with "
          "setsid() and a double fork, and ends it") {
  auto said = in_child([]() -> std::string {
    if (!adopt_orphans())
      return "PR_SET_CHILD_SUBREAPER refused";
    auto sleeper = start_escaped_sleeper();
    if (sleeper <= 0)
      return "cannot start the sleeper";
    if (!has_child_processes()) {
      ::kill(sleeper, SIGKILL);
      return "the orphan is not the runner's child";
    }
    auto killed = end_children();
    if (killed != 1)
      return "killed " + std::to_string(killed);
    return gone(sleeper) ? "" : "the orphan is still there";
  });
  CHECK(said == "");
}

TEST_CASE("ending a runner's children ends theirs too, handed to it as "
          "their parents die") {
  auto said = in_child([]() -> std::string {
    if (!adopt_orphans())
      return "PR_SET_CHILD_SUBREAPER refused";
    int fds[2];
    if (::pipe(fds) != 0)
      return "no pipe";
    pid_t parent = ::fork();
    if (parent == 0) {
      pid_t child = ::fork();
      if (child == 0)
        sleep_forever();
      (void)!::write(fds[1], &child, sizeof(child));
      sleep_forever();
    }
    ::close(fds[1]);
    pid_t child = -1;
    (void)!::read(fds[0], &child, sizeof(child));
    ::close(fds[0]);
    auto killed = end_children();
    if (killed != 2)
      return "killed " + std::to_string(killed);
    if (!gone(parent) || !gone(child))
      return "a process is still there";
    return has_child_processes() ? "children left" : "";
  });
  CHECK(said == "");
}

TEST_CASE("a runner that gets no PID namespace adopts its kernels' orphans "
          "and ends them") {
  // Not root and no user namespace: unshare(CLONE_NEWPID) is refused.
  auto uid = ::geteuid() == 0 ? unused_uid(54'330) : ::geteuid();
  auto said = in_child(
    [&]() -> std::string {
      if (!become_user(uid))
        return "cannot switch users";
      runner_limits limits;
      limits.extra_tasks = 4;
      limits.user_namespace = false;
      auto report = apply_sandbox(limits, 0);
      if (!report.error.empty())
        return report.error;
      if (report.pid_isolated)
        return "a PID namespace was made";
      if (!report.orphans_adopted)
        return "orphans not adopted";
      auto sleeper = start_escaped_sleeper();
      if (sleeper <= 0)
        return "cannot start the sleeper";
      if (!has_child_processes())
        return "the orphan is not the runner's child";
      auto killed = end_children();
      return killed == 1 && gone(sleeper) ? "" : "not ended";
    },
    runner_reply_fd);
  CHECK(said == "");
}
