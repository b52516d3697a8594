#include "devices/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"

namespace eat::devices {

void unique_fd::reset() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

namespace {

caf::expected<unique_fd> raise_fd(int fd) {
  unique_fd low{fd};
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  if (high < 0)
    return make_error(error::io_failure,
      std::string{"cannot duplicate a pipe: "} + std::strerror(errno));
  return unique_fd{high};
}

} // namespace

caf::expected<pipe_ends> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return make_error(error::io_failure,
      std::string{"cannot open a pipe: "} + std::strerror(errno));
  auto read = raise_fd(fds[0]);
  auto write = raise_fd(fds[1]);
  if (!read)
    return std::move(read.error());
  if (!write)
    return std::move(write.error());
  return pipe_ends{std::move(*read), std::move(*write)};
}

} // namespace eat::devices
