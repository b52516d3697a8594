#include "devices/runner/user_namespace.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace eat::devices {

namespace {

std::string failure(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

/// Writes `text` to /proc/self/<file>; an empty string, or the error.
std::string write_proc(const char* file, const std::string& text) {
  std::string path = std::string{"/proc/self/"} + file;
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return failure(path);
  auto n = ::write(fd, text.data(), text.size());
  auto err = errno;
  ::close(fd);
  errno = err;
  if (n != static_cast<ssize_t>(text.size()))
    return failure(path);
  return {};
}

} // namespace

user_namespace_result enter_user_namespace() {
  user_namespace_result result;
  // /proc/self/uid_map belongs to root for a non-dumpable process (one that
  // changed its ids), and its owner must write it: checked before the step
  // that cannot be undone.
  if (::prctl(PR_GET_DUMPABLE) != 1) {
    result.why_not = "the process is not dumpable";
    return result;
  }
  auto uid = std::to_string(::getuid());
  auto gid = std::to_string(::getgid());
  if (::unshare(CLONE_NEWUSER) != 0) {
    result.why_not = failure("unshare(CLONE_NEWUSER)");
    return result;
  }
  // An unprivileged process may map only its own ids, and its group only
  // once setgroups is denied.
  for (auto why : {write_proc("uid_map", uid + " " + uid + " 1\n"),
         write_proc("setgroups", "deny"),
         write_proc("gid_map", gid + " " + gid + " 1\n")})
    if (!why.empty()) {
      result.error = "in a new user namespace: " + why;
      return result;
    }
  result.entered = true;
  return result;
}

std::string drop_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capset, &header, none) != 0)
    return failure("capset");
  return {};
}

} // namespace eat::devices
