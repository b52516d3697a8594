// Specification of the runner's pids cgroup (devices/runner/pids_cgroup.hpp):
// the cap on an evaluation's tasks that holds for root, whom RLIMIT_NPROC
// does not limit. Each case forks a stand-in for the runner, which enters
// the cgroup (and the PID namespace) as eat-runner does and reports what it
// saw on a pipe. Making the cgroup needs a writable cgroup file system with
// the pids controller (root, as in CI); without one a case says why and
// ends.

#include <cerrno>
#include <csignal>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/pid_namespace.hpp"
#include "devices/runner/pids_cgroup.hpp"

using namespace eat::devices;

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
  WARN("no pids cgroup here (uid " << ::getuid() << "): " << r.why_not);
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
    auto ns = enter_pid_namespace(cg);
    std::vector<pid_t> children;
    for (int i = 0; i < 50; ++i) {
      pid_t child = ::fork();
      if (child == 0) {
        ::alarm(60); // a cap that fails must not leak processes for ever
        for (;;)
          ::pause();
      }
      if (child < 0)
        break;
      children.push_back(child);
    }
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
    send(pipe_fds[1], leave_pids_cgroup(cg));
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
