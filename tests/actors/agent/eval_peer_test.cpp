// Specification of the ./eval server's peer check (eval_peer.hpp): a client
// is served only from the PID namespace that the attempt's keeper makes for
// its children, and only while it is the process that connected.

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/agent/eval_peer.hpp"
#include "devices/unique_fd.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;
using devices::unique_fd;

namespace {

sockaddr_un address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  return addr;
}

unique_fd listening_at(const std::string& path) {
  unique_fd fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  auto addr = address(path);
  REQUIRE(
    ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(fd.get(), 4) == 0);
  return fd;
}

/// A child process, ended and reaped at the end of the scope: it waits until
/// its pipe is closed.
class held_child {
public:
  explicit held_child(pid_t pid, int release) : pid_{pid}, release_{release} {}
  held_child(held_child&& other) noexcept
    : pid_{std::exchange(other.pid_, 0)}, release_{std::move(other.release_)} {}
  held_child& operator=(held_child&&) = delete;
  ~held_child() {
    release_.reset();
    int status = 0;
    while (pid_ > 0 && ::waitpid(pid_, &status, __WALL) < 0 && errno == EINTR)
      ; // retry
  }
  pid_t pid() const {
    return pid_;
  }

private:
  pid_t pid_;
  unique_fd release_;
};

/// Blocks until `fd` is closed at its other end (async-signal-safe).
void wait_for_close(int fd) {
  char byte;
  while (::read(fd, &byte, 1) < 0 && errno == EINTR)
    ; // retry
}

/// A child that runs `first` (async-signal-safe), tells its answer, and
/// then exits at once (`stay` false) or waits until released. Returns the
/// child and the answer.
template<class First>
std::pair<held_child, char> forked(First first, bool stay) {
  int told[2], release[2];
  REQUIRE(::pipe2(told, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(release, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(told[0]);
    ::close(release[1]);
    char answer = first();
    (void)!::write(told[1], &answer, 1);
    if (stay)
      wait_for_close(release[0]);
    ::_exit(0);
  }
  ::close(told[1]);
  ::close(release[0]);
  char answer = 0;
  REQUIRE(::read(told[0], &answer, 1) == 1);
  ::close(told[0]);
  return {held_child{pid, release[1]}, answer};
}

/// A child that connects to `path`, and then exits at once (`stay` false)
/// or waits until released.
held_child connecting_child(const std::string& path, bool stay) {
  auto addr = address(path);
  auto [child, connected] = forked(
    [&] {
      int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      return static_cast<char>(
        ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    },
    stay);
  REQUIRE(connected == 1);
  return std::move(child);
}

std::pair<dev_t, ino_t> namespace_of(pid_t pid, const char* name) {
  struct stat st {};
  auto link = "/proc/" + std::to_string(pid) + "/ns/" + name;
  if (::stat(link.c_str(), &st) != 0)
    return {0, 0};
  return {st.st_dev, st.st_ino};
}

unique_fd accepted(const unique_fd& listener) {
  unique_fd fd{::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC)};
  REQUIRE(fd);
  return fd;
}

} // namespace

TEST_CASE("a client is served only for a keeper whose children share its PID "
          "namespace") {
  test::temp_dir dir;
  auto path = (dir.path() / "eval.sock").string();
  auto listener = listening_at(path);
  auto client = connecting_child(path, true);
  auto conn = accepted(listener);

  // eat's children share eat's namespace: the client is one of them.
  CHECK(peer_is_child_of(conn.get(), ::getpid()));

  // A keeper whose children get a PID namespace of their own (in a user
  // namespace, so that no privilege is needed).
  auto [keeper, made] = forked(
    [] {
      return static_cast<char>(::unshare(CLONE_NEWUSER | CLONE_NEWPID) == 0);
    },
    true);
  if (made != 1) {
    WARN("the kernel refuses user namespaces; the refusal is not checked");
    return;
  }
  CHECK_FALSE(peer_is_child_of(conn.get(), keeper.pid()));
}

TEST_CASE("a client that exited is refused even once its pid is a process "
          "of the keeper's namespace") {
  test::temp_dir dir;
  auto path = (dir.path() / "eval.sock").string();
  auto listener = listening_at(path);
  pid_t gone = 0;
  {
    auto client = connecting_child(path, false);
    gone = client.pid();
  } // reaped: its pid is free
  auto conn = accepted(listener);
  int pidfd = -1;
  socklen_t len = sizeof(pidfd);
  if (::getsockopt(conn.get(), SOL_SOCKET, 77 /* SO_PEERPIDFD */, &pidfd, &len)
        != 0
      && errno == ENOPROTOOPT) {
    WARN("the kernel has no SO_PEERPIDFD (Linux 6.5): not checked");
    return;
  }
  unique_fd owned{pidfd};

  // The keeper takes the client's pid, as the first process of a new PID
  // namespace (clone3 with set_tid: root only).
  int release[2];
  REQUIRE(::pipe2(release, O_CLOEXEC) == 0);
  pid_t both[2] = {1, gone};
  clone_args args{};
  args.flags = CLONE_NEWPID;
  args.exit_signal = SIGCHLD;
  args.set_tid = reinterpret_cast<uint64_t>(both);
  args.set_tid_size = 2;
  long pid = ::syscall(SYS_clone3, &args, sizeof(args));
  if (pid == 0) {
    ::close(release[1]);
    wait_for_close(release[0]);
    ::_exit(0);
  }
  ::close(release[0]);
  if (pid < 0) {
    ::close(release[1]);
    WARN("cannot give the client's pid to a new process ("
         << std::strerror(errno) << "): not checked");
    return;
  }
  held_child keeper{static_cast<pid_t>(pid), release[1]};
  REQUIRE(keeper.pid() == gone);
  // The trap is set: looked up by pid, the client is in the keeper's
  // namespace.
  REQUIRE(namespace_of(gone, "pid").second != 0);
  REQUIRE(namespace_of(gone, "pid") == namespace_of(gone, "pid_for_children"));

  CHECK_FALSE(peer_is_child_of(conn.get(), keeper.pid()));
}
