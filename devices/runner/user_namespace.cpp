#include "devices/runner/user_namespace.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/// Maps the ids `uid` and `gid` to themselves in the user namespace just
/// made: "" or why not.
std::string write_maps(const std::string& uid, const std::string& gid) {
  // An unprivileged process may map only its own ids, and its group only
  // once setgroups is denied.
  for (auto why : {write_proc("uid_map", uid + " " + uid + " 1\n"),
         write_proc("setgroups", "deny"),
         write_proc("gid_map", gid + " " + gid + " 1\n")})
    if (!why.empty())
      return why;
  return {};
}

/// Makes a user namespace and maps the ids in a child first: "" where that
/// worked there, or why the ids could not be mapped. AppArmor's restriction of
/// unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns,
/// the default since Ubuntu 23.10) lets unshare succeed but gives the namespace
/// no capability, so that the maps cannot be written (review of the sandbox).
/// A child that could not even unshare says "" too: the caller's own
/// unshare then fails, and it stays where it was.
std::string maps_in_child(const std::string& uid, const std::string& gid) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    return failure("pipe");
  pid_t child = ::fork();
  if (child < 0) {
    ::close(report[0]);
    ::close(report[1]);
    return failure("fork");
  }
  if (child == 0) {
    ::close(report[0]);
    std::string why;
    if (::unshare(CLONE_NEWUSER) == 0)
      why = write_maps(uid, gid);
    (void)!::write(report[1], why.data(), why.size());
    ::_exit(0);
  }
  ::close(report[1]);
  std::string why;
  char buf[256];
  for (;;) {
    auto n = ::read(report[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    why.append(buf, static_cast<size_t>(n));
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR)
    ; // retry
  return why;
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
  if (auto why = maps_in_child(uid, gid); !why.empty()) {
    result.why_not = "its ids could not be mapped in a user namespace (" + why
                     + "; AppArmor's restriction of user namespaces?)";
    return result;
  }
  if (::unshare(CLONE_NEWUSER) != 0) {
    result.why_not = failure("unshare(CLONE_NEWUSER)");
    return result;
  }
  if (auto why = write_maps(uid, gid); !why.empty()) {
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
