#include "actors/agent/keeper_mounts.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
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

/// Sets read-only on the mount at `path` and those under it, or clears it
/// on the mount at `path` alone. Kernels before 5.12 lack mount_setattr:
/// then only the mount at `path` changes either way, with the flags it has
/// kept (a user namespace may not clear nosuid, nodev or noexec).
std::string set_read_only(const std::string& path, bool read_only) {
  mount_attributes attr;
  (read_only ? attr.attr_set : attr.attr_clr) = attr_read_only;
#ifdef SYS_mount_setattr
  // Read-only for what is mounted under `path` too; writable only for
  // `path` itself: a mount the machine has read-only under /tmp stays so.
  if (::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(),
        read_only ? recursive : 0u, &attr, sizeof(attr))
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

/// Creates what a mount of `source` (a directory or not) needs at `path`,
/// its parents too, where a hidden folder left nothing.
std::string make_mount_point(const std::string& path, int source) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0)
    return {};
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1))
    ::mkdir(path.substr(0, slash).c_str(), 0755);
  struct stat from;
  if (::fstat(source, &from) != 0)
    return failure("fstat " + path);
  int made = S_ISDIR(from.st_mode)
               ? ::mkdir(path.c_str(), 0755)
               : ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (made < 0)
    return failure("making a mount point at " + path);
  if (!S_ISDIR(from.st_mode))
    ::close(made);
  return {};
}

/// Mounts what `source` (an O_PATH descriptor) names at `path`, read-only
/// or writable.
std::string bind_from(int source, const std::string& path, bool read_only) {
  if (auto why = make_mount_point(path, source); !why.empty())
    return why;
  auto from = "/proc/self/fd/" + std::to_string(source);
  if (::mount(from.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr)
      != 0)
    return failure("bind mount " + path);
  return set_read_only(path, read_only);
}

/// Covers `path` with an empty tmpfs of its own, or, where it is a file,
/// with /dev/null, read-only; nothing where it is missing (under a folder
/// hidden before: hidden already), or went missing meanwhile (another
/// run's folder, removed as this CLI started).
std::string hide(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? std::string{} : failure("stat " + path);
  if (!S_ISDIR(st.st_mode)) {
    if (::mount("/dev/null", path.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return errno == ENOENT ? std::string{} : failure("hiding " + path);
    return set_read_only(path, true); // writes still reach /dev/null
  }
  if (::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
      != 0)
    return errno == ENOENT ? std::string{} : failure("hiding " + path);
  return {};
}

/// Replaces /dev with a small one of its own, as container runtimes do:
/// null, zero, full, random, urandom and tty from the machine's, a pts
/// instance of its own and an empty shm. A root CLI without capabilities
/// still opened the machine's disks and consoles for writing, read-only
/// mounts or not (red team).
std::string make_dev() {
  const char* nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
  int fds[std::size(nodes)];
  for (size_t i = 0; i < std::size(nodes); ++i)
    fds[i]
      = ::open((std::string{"/dev/"} + nodes[i]).c_str(), O_PATH | O_CLOEXEC);
  std::string why;
  if (::mount(
        "tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=1m")
      != 0)
    why = failure("mounting a /dev of its own");
  for (size_t i = 0; i < std::size(nodes) && why.empty(); ++i)
    if (fds[i] >= 0)
      why = bind_from(fds[i], std::string{"/dev/"} + nodes[i], false);
  for (int fd : fds)
    if (fd >= 0)
      ::close(fd);
  if (!why.empty())
    return why;
  ::mkdir("/dev/pts", 0755);
  ::mkdir("/dev/shm", 01777);
  // Without ptys or shm a CLI mostly works: neither is fatal.
  if (::mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
        "newinstance,ptmxmode=0666,mode=620")
      == 0)
    ::symlink("pts/ptmx", "/dev/ptmx");
  ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
  ::chmod("/dev/shm", 01777);
  for (auto [link, target] : {std::pair{"/dev/fd", "/proc/self/fd"},
         std::pair{"/dev/stdin", "/proc/self/fd/0"},
         std::pair{"/dev/stdout", "/proc/self/fd/1"},
         std::pair{"/dev/stderr", "/proc/self/fd/2"}})
    ::symlink(target, link);
  return {};
}

} // namespace

std::string make_read_only(const std::vector<keeper_mount>& mounts) {
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr)
    return failure("getcwd");
  if (::unshare(CLONE_NEWNS) != 0)
    return failure("unshare(CLONE_NEWNS)");
  // Nothing done here reaches the mounts outside.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return failure("making / private");
  // Each path as it is before any change (in this namespace: a bind mount
  // takes only its own mounts): a hidden folder's tmpfs covers some.
  std::vector<int> sources;
  for (const auto& m : mounts)
    sources.push_back(m.kind == mount_kind::hidden || m.path == "/"
                        ? -1
                        : ::open((m.source.empty() ? m.path : m.source).c_str(),
                          O_PATH | O_CLOEXEC));
  auto close_sources = [&] {
    for (int fd : sources)
      if (fd >= 0)
        ::close(fd);
  };
  std::string why;
  for (size_t i = 0; i < mounts.size() && why.empty(); ++i) {
    const auto& [path, kind, source] = mounts[i];
    bool read_only = kind != mount_kind::writable;
    if (path == "/") // changed where it is: a mount over it would not be
      why = set_read_only(path, read_only); // the root of the processes here
    else if (kind == mount_kind::hidden)
      why = hide(path);
    else if (sources[i] >= 0)
      why = bind_from(sources[i], path, read_only);
    else if (!source.empty())
      why = failure("opening " + source + " to mount at " + path);
  }
  close_sources();
  if (!why.empty())
    return why;
  if (auto dev = make_dev(); !dev.empty())
    return dev;
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
