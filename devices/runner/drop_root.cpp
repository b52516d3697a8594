#include "devices/runner/drop_root.hpp"

#include "devices/runner_protocol.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace eat::devices {

namespace {

std::string failure(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

/// Gives the working directory, the evaluation's scratch directory, to
/// `uid`; refuses a directory that is not root's own and private.
std::string give_scratch(uid_t uid, gid_t gid) {
  struct stat st;
  if (::stat(".", &st) != 0)
    return failure("cannot stat the scratch directory");
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077) != 0)
    return "the working directory is not a scratch directory private to "
           "root";
  if (::chown(".", uid, gid) != 0)
    return failure("cannot give the scratch directory to uid "
                   + std::to_string(uid));
  return {};
}

/// Copies the file at `path` into a memory file and returns its descriptor
/// (-1 on failure, errno set). Opening /proc/self/fd/N checks the file's
/// own mode again; a memory file's (0777, root's) lets the new user load
/// the copy whatever the original's mode and directories.
int copy_to_memory(const std::string& path) {
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return -1;
  int out = ::memfd_create("eat-code", MFD_CLOEXEC);
  char buf[1 << 16];
  ssize_t n = 0;
  while (out >= 0 && (n = ::read(in, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || ::write(out, buf, static_cast<size_t>(n)) != n) {
      ::close(out);
      out = -1;
    }
  }
  int saved = errno;
  ::close(in);
  errno = saved;
  return out;
}

} // namespace

std::string drop_root(
  int64_t uid, int64_t gid, const std::vector<std::string*>& code) {
  if (uid <= 0 || ::geteuid() != 0)
    return {};
  if (gid < 0)
    return "no group id to run kernel code as";
  // All copied, or none: the paths change only once every copy is made.
  std::vector<int> copies;
  for (auto* path : code) {
    int fd = copy_to_memory(*path);
    if (fd < 0) {
      auto why = failure("cannot copy " + *path + " to memory");
      for (int copy : copies)
        ::close(copy);
      return why;
    }
    copies.push_back(fd);
  }
  for (size_t i = 0; i < code.size(); ++i)
    *code[i] = code_fd_prefix + std::to_string(copies[i]);
  // The kernel clears the parent-death signal when the ids change.
  int death_signal = 0;
  ::prctl(PR_GET_PDEATHSIG, &death_signal);
  auto u = static_cast<uid_t>(uid);
  auto g = static_cast<gid_t>(gid);
  if (auto why = give_scratch(u, g); !why.empty())
    return why;
  if (::setgroups(0, nullptr) != 0)
    return failure("setgroups");
  if (::setresgid(g, g, g) != 0)
    return failure("setresgid(" + std::to_string(g) + ")");
  if (::setresuid(u, u, u) != 0)
    return failure("setresuid(" + std::to_string(u) + ")");
  if (::setresuid(0, 0, 0) == 0 || ::getuid() != u || ::geteuid() != u)
    return "root's privileges came back after setresuid";
  if (death_signal != 0 && ::prctl(PR_SET_PDEATHSIG, death_signal) != 0)
    return failure("PR_SET_PDEATHSIG");
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && ::access(tmp, W_OK | X_OK) != 0)
    ::setenv("TMPDIR", "/proc/self/cwd", 1);
  return {};
}

void close_code_fd(const std::string& path) {
  if (path.rfind(code_fd_prefix, 0) != 0)
    return;
  char* end = nullptr;
  long fd = std::strtol(path.c_str() + std::strlen(code_fd_prefix), &end, 10);
  if (end != nullptr && *end == '\0' && fd > 2 && fd != runner_reply_fd)
    ::close(static_cast<int>(fd));
}

} // namespace eat::devices
