#include "actors/agent/eval_peer.hpp"

#include <cerrno>
#include <string>
#include <utility>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "devices/unique_fd.hpp"

namespace eat {

namespace {

/// SO_PEERPIDFD (Linux 6.5); the headers of glibc 2.36 lack it.
constexpr int so_peerpidfd = 77;

/// The identity of process `pid`'s namespace link `name` ("pid",
/// "pid_for_children"); {0, 0} when it cannot be read.
std::pair<dev_t, ino_t> namespace_of(pid_t pid, const char* name) {
  struct stat st;
  auto link = "/proc/" + std::to_string(pid) + "/ns/" + name;
  if (::stat(link.c_str(), &st) != 0)
    return {0, 0};
  return {st.st_dev, st.st_ino};
}

/// A pidfd of the client at `fd`: {true, fd} where the kernel gave one,
/// {true, none} where the kernel knows SO_PEERPIDFD but the client is gone,
/// {false, none} where it does not know it.
std::pair<bool, devices::unique_fd> peer_pidfd(int fd) {
  int pidfd = -1;
  socklen_t len = sizeof(pidfd);
  if (::getsockopt(fd, SOL_SOCKET, so_peerpidfd, &pidfd, &len) == 0)
    return {true, devices::unique_fd{pidfd}};
  return {errno != ENOPROTOOPT, devices::unique_fd{}};
}

/// Whether the process of `pidfd` has not exited (EPERM: it lives, but
/// may not be signalled).
bool alive(int pidfd) {
  return ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0
         || errno == EPERM;
}

} // namespace

bool peer_is_child_of(int fd, pid_t keeper) {
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0
      || peer.pid <= 0)
    return false;
  auto [known, pidfd] = peer_pidfd(fd);
  if (known && !pidfd)
    return false;
  auto theirs = namespace_of(peer.pid, "pid");
  // Alive after the lookup: the pid was still the client's at it.
  if (pidfd && !alive(pidfd.get()))
    return false;
  return theirs.second != 0
         && theirs == namespace_of(keeper, "pid_for_children");
}

} // namespace eat
