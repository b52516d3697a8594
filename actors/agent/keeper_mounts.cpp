#include "actors/agent/keeper_mounts.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "devices/runner/user_namespace.hpp"

namespace eat {

namespace {

std::string failure(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

/// struct mount_attr of <linux/mount.h> (which clashes with glibc's
/// <sys/mount.h>).
struct mount_attributes {
  uint64_t attr_set = 0;
  uint64_t attr_clr = 0;
  uint64_t propagation = 0;
  uint64_t userns_fd = 0;
};
constexpr uint64_t attr_read_only = 0x1; // MOUNT_ATTR_RDONLY
constexpr unsigned recursive = 0x8000;   // AT_RECURSIVE

/// Sets (or clears) read-only on the mount at `path` and those under it.
/// Kernels before 5.12 lack mount_setattr: then only the mount at `path`
/// changes, with the flags it has kept (a user namespace may not clear
/// nosuid, nodev or noexec).
std::string set_read_only(const std::string& path, bool read_only) {
  mount_attributes attr;
  (read_only ? attr.attr_set : attr.attr_clr) = attr_read_only;
#ifdef SYS_mount_setattr
  if (::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(), recursive, &attr,
        sizeof(attr))
      == 0)
    return {};
  if (errno != ENOSYS)
    return failure("mount_setattr " + path);
#endif
  struct statvfs vfs;
  if (::statvfs(path.c_str(), &vfs) != 0)
    return failure("statvfs " + path);
  unsigned long flags = MS_REMOUNT | MS_BIND;
  for (auto [st, ms] :
    {std::pair{ST_NOSUID, MS_NOSUID}, std::pair{ST_NODEV, MS_NODEV},
      std::pair{ST_NOEXEC, MS_NOEXEC}, std::pair{ST_NOATIME, MS_NOATIME},
      std::pair{ST_NODIRATIME, MS_NODIRATIME},
      std::pair{ST_RELATIME, MS_RELATIME}})
    if ((vfs.f_flag & st) != 0)
      flags |= ms;
  if (read_only)
    flags |= MS_RDONLY;
  if (::mount(nullptr, path.c_str(), nullptr, flags, nullptr) != 0)
    return failure("remount " + path);
  return {};
}

/// Bind-mounts `path` onto itself (with what is mounted under it) and sets
/// it read-only or writable; nothing for a path that does not exist.
std::string remount(const std::string& path, bool read_only) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? std::string{} : failure("stat " + path);
  if (::mount(path.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr)
      != 0)
    return failure("bind mount " + path);
  return set_read_only(path, read_only);
}

} // namespace

std::string make_read_only(
  const std::vector<std::pair<std::string, bool>>& mounts) {
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr)
    return failure("getcwd");
  if (::unshare(CLONE_NEWNS) != 0)
    return failure("unshare(CLONE_NEWNS)");
  // Nothing done here reaches the mounts outside.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return failure("making / private");
  for (const auto& [path, writable] : mounts) {
    // The root is changed where it is: a mount over it would not be the
    // root of the processes here.
    auto why
      = path == "/" ? set_read_only(path, !writable) : remount(path, !writable);
    if (!why.empty())
      return why;
  }
  if (::mount(
        "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr)
      != 0)
    return failure("mounting the PID namespace's /proc");
  // As container runtimes do: the machine's settings stay as they are (a
  // root CLI set kernel.core_pattern to a program of its own, which the
  // kernel then ran as root outside every namespace: red team).
  for (const char* path :
    {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"})
    if (auto why = remount(path, true); !why.empty())
      return why;
  // The working directory, looked up again, is on the mounts made here.
  if (::chdir(cwd) != 0)
    return failure(std::string{"chdir "} + cwd);
  return {};
}

std::string give_up_capabilities() {
  for (int cap = 0; cap <= 63; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return failure("dropping capability " + std::to_string(cap));
  return devices::drop_capabilities();
}

} // namespace eat
