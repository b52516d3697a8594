#include "devices/runner/runner_pipes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "devices/runner_protocol.hpp"

namespace eat::devices {

namespace {

/// Requests are a few KiB; anything near this is not from the device.
constexpr size_t max_request_bytes = size_t{64} << 20;

} // namespace

void runner_exit(const char* program, int code, const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", program, why.c_str());
  std::fflush(stderr);
  ::_exit(code);
}

void keep_only_protocol_fds() {
  ::close_range(runner_reply_fd + 1, ~0u, 0);
}

std::string read_request_bytes(const char* program) {
  std::string bytes;
  char buf[65536];
  for (;;) {
    auto n = ::read(runner_request_fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      runner_exit(program, 2,
        std::string{"cannot read the request: "} + std::strerror(errno));
    if (n == 0)
      break;
    bytes.append(buf, static_cast<size_t>(n));
    if (bytes.size() > max_request_bytes)
      runner_exit(program, 2, "request too large");
  }
  ::close(runner_request_fd);
  return bytes;
}

void write_reply_bytes(const char* program, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(runner_reply_fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      runner_exit(program, 4,
        std::string{"cannot write the reply: "} + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

} // namespace eat::devices
