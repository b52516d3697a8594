// An owned file descriptor that closes itself, and the pipes built from it.
// Owned by whoever holds the value; move-only; not shared between threads.

#pragma once

#include <utility>

#include <caf/expected.hpp>

namespace eat::devices {

/// Owns a file descriptor; closes it on destruction.
class unique_fd {
public:
  unique_fd() = default;

  explicit unique_fd(int fd) : fd_(fd) {
    // nop
  }

  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {
    // nop
  }

  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }

  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;

  ~unique_fd() {
    reset();
  }

  int get() const {
    return fd_;
  }

  explicit operator bool() const {
    return fd_ >= 0;
  }

  /// Closes the descriptor now (if any).
  void reset();

private:
  int fd_ = -1;
};

/// Both ends of a pipe.
struct pipe_ends {
  unique_fd read;
  unique_fd write;
};

/// Opens a pipe whose ends are close-on-exec and numbered 10 or above, so
/// that mapping them onto a child's fds 0..9 can never clobber one another.
caf::expected<pipe_ends> make_pipe();

} // namespace eat::devices
