#include "tests/persistence/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <stdexcept>

#include <sys/wait.h>
#include <unistd.h>

namespace eat::test {

child_process::child_process(const std::function<int(int write_fd)>& body) {
  int fds[2];
  if (pipe(fds) != 0)
    throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ < 0)
    throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    close(fds[0]);
    int rc = 3;
    try {
      rc = body(fds[1]);
    } catch (...) {
      rc = 3;
    }
    _exit(rc);
  }
  close(fds[1]);
  read_fd_ = fds[0];
}

child_process::~child_process() {
  if (pid_ > 0)
    kill_and_reap();
  if (read_fd_ >= 0)
    close(read_fd_);
}

bool child_process::read_exact(void* buf, size_t size) {
  auto* out = static_cast<char*>(buf);
  while (size > 0) {
    auto n = read(read_fd_, out, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    out += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

int child_process::kill_and_reap() {
  if (pid_ <= 0) // Never kill(-1, ...): that would signal every process.
    return -1;
  kill(pid_, SIGKILL);
  return reap();
}

int child_process::reap() {
  if (pid_ <= 0)
    return -1;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    // retry
  }
  pid_ = -1;
  return status;
}

} // namespace eat::test
