#include "devices/runner/run_delay.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace eat::devices {

namespace {

std::string text_of(int fd) {
  char buf[512];
  auto n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string{};
}

/// The number /proc gives `pid` (a number in the caller's PID namespace):
/// the "Pid:" line of a pidfd's fdinfo, which /proc answers in its own
/// namespace. -1 with `why` when it cannot be found.
pid_t proc_number(pid_t pid, std::string& why) {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    why = std::string{"pidfd_open: "} + std::strerror(errno);
    return -1;
  }
  // Read while the pidfd is open: its fdinfo is gone with it.
  auto path = "/proc/self/fdinfo/" + std::to_string(pidfd);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  auto err = errno;
  auto text = fd >= 0 ? text_of(fd) : std::string{};
  if (fd >= 0) {
    err = errno;
    ::close(fd);
  }
  ::close(pidfd);
  auto at = text.find("\nPid:");
  if (at == std::string::npos) {
    why = "cannot read the number of process " + std::to_string(pid) + " from "
          + path + ": " + (text.empty() ? std::strerror(err) : "no Pid line");
    return -1;
  }
  auto number = std::strtol(text.c_str() + at + 5, nullptr, 10);
  if (number <= 0) {
    why = "process " + std::to_string(pid)
          + " is not in the PID namespace of /proc";
    return -1;
  }
  return static_cast<pid_t>(number);
}

schedstat_file open_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return schedstat_file::failed(
      "cannot open " + path + ": " + std::strerror(errno));
  return schedstat_file::adopt(fd);
}

} // namespace

schedstat_file::schedstat_file(schedstat_file&& other) noexcept
  : fd_(other.fd_), why_not_(std::move(other.why_not_)) {
  other.fd_ = -1;
}

schedstat_file& schedstat_file::operator=(schedstat_file&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    why_not_ = std::move(other.why_not_);
    other.fd_ = -1;
  }
  return *this;
}

schedstat_file::~schedstat_file() {
  if (fd_ >= 0)
    ::close(fd_);
}

schedstat_file schedstat_file::adopt(int fd) {
  schedstat_file f;
  f.fd_ = fd;
  if (f.read().waited_ns < 0)
    return failed("no run delay in its text (CONFIG_SCHED_INFO off?)");
  return f;
}

schedstat_file schedstat_file::failed(std::string why) {
  schedstat_file f;
  f.why_not_ = std::move(why);
  return f;
}

schedstat_file schedstat_file::of_this_thread() {
  return open_file("/proc/thread-self/schedstat");
}

schedstat_file schedstat_file::of_child(pid_t pid) {
  std::string why;
  auto number = proc_number(pid, why);
  if (number < 0)
    return failed(std::move(why));
  return open_file("/proc/" + std::to_string(number) + "/schedstat");
}

sched_reading schedstat_file::read() const {
  if (fd_ < 0)
    return {};
  return parse_schedstat(text_of(fd_));
}

sched_reading parse_schedstat(const std::string& text) {
  const char* p = text.c_str();
  char* end = nullptr;
  errno = 0;
  auto ran = std::strtoll(p, &end, 10);
  if (end == p || errno != 0 || ran < 0)
    return {};
  p = end;
  auto waited = std::strtoll(p, &end, 10);
  if (end == p || errno != 0 || waited < 0)
    return {};
  return {ran, waited};
}

int64_t others_time_ns(
  sched_reading before, sched_reading after, int64_t own_ns) {
  if (before.waited_ns < 0 || after.waited_ns < 0)
    return 0;
  return std::max<int64_t>(
    0, after.waited_ns - before.waited_ns - std::max<int64_t>(0, own_ns));
}

} // namespace eat::devices
