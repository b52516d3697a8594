#include "devices/landlock.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace eat::devices {

namespace {

// Debian 12's <linux/landlock.h> (Linux 6.1) knows ABI 2: the rights and
// fields of later ABIs are spelled out here, as the kernel defines them.
constexpr uint64_t fs_execute = 1ULL << 0;
constexpr uint64_t fs_write_file = 1ULL << 1;
constexpr uint64_t fs_read_file = 1ULL << 2;
constexpr uint64_t fs_read_dir = 1ULL << 3;
constexpr uint64_t fs_truncate = 1ULL << 14;  // ABI 3
constexpr uint64_t fs_ioctl_dev = 1ULL << 15; // ABI 5
constexpr uint64_t net_bind_tcp = 1ULL << 0;  // ABI 4
constexpr uint64_t net_connect_tcp = 1ULL << 1;
constexpr uint64_t scope_abstract_unix_socket = 1ULL << 0; // ABI 6
constexpr uint64_t scope_signal = 1ULL << 1;

/// The rights that apply to a file (not a directory) in a rule.
constexpr uint64_t file_rights
  = fs_execute | fs_write_file | fs_read_file | fs_truncate | fs_ioctl_dev;

/// struct landlock_ruleset_attr of ABI 6; older kernels take a prefix.
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

/// struct landlock_path_beneath_attr (packed in the kernel's header).
struct __attribute__((packed)) path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

constexpr int create_version = 1;    // LANDLOCK_CREATE_RULESET_VERSION
constexpr int rule_path_beneath = 1; // LANDLOCK_RULE_PATH_BENEATH

#if defined(SYS_landlock_create_ruleset) && defined(SYS_landlock_add_rule)     \
  && defined(SYS_landlock_restrict_self)
long create_ruleset(const ruleset_attr* attr, size_t size, uint32_t flags) {
  return ::syscall(SYS_landlock_create_ruleset, attr, size, flags);
}
long add_rule(int ruleset, const path_beneath_attr& rule) {
  return ::syscall(SYS_landlock_add_rule, ruleset, rule_path_beneath, &rule, 0);
}
long restrict_self(int ruleset) {
  return ::syscall(SYS_landlock_restrict_self, ruleset, 0);
}
#else
long create_ruleset(const ruleset_attr*, size_t, uint32_t) {
  errno = ENOSYS;
  return -1;
}
long add_rule(int, const path_beneath_attr&) {
  errno = ENOSYS;
  return -1;
}
long restrict_self(int) {
  errno = ENOSYS;
  return -1;
}
#endif

/// The file rights an ABI knows (all of them are handled, so that none is
/// left open by being unknown to the ruleset).
uint64_t handled_fs(int abi) {
  if (abi >= 5)
    return (1ULL << 16) - 1;
  if (abi >= 3)
    return (1ULL << 15) - 1;
  if (abi == 2)
    return (1ULL << 14) - 1;
  return (1ULL << 13) - 1;
}

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

/// Adds one rule for `path` with `rights` (masked by what the ruleset
/// handles, and to file rights for a file); a missing path is skipped.
std::string add_path(
  int ruleset, const std::string& path, uint64_t rights, uint64_t handled) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? "" : errno_text("cannot open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    auto why = errno_text("cannot stat " + path);
    ::close(fd);
    return why;
  }
  if (!S_ISDIR(st.st_mode))
    rights &= file_rights;
  path_beneath_attr rule{rights & handled, fd};
  auto rc = add_rule(ruleset, rule);
  auto why = rc == 0 ? "" : errno_text("cannot add a rule for " + path);
  ::close(fd);
  return why;
}

} // namespace

int landlock_abi() {
  auto abi = create_ruleset(nullptr, 0, create_version);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

std::string landlock_description() {
  auto abi = create_ruleset(nullptr, 0, create_version);
  if (abi > 0)
    return "Landlock ABI " + std::to_string(abi);
  if (errno == EOPNOTSUPP)
    return "Landlock is turned off on this kernel (see the lsm= boot option)";
  return "this kernel has no Landlock";
}

std::string landlock_confine(const landlock_rules& rules) {
  int abi = landlock_abi();
  if (abi == 0)
    return landlock_description();
  ruleset_attr attr{handled_fs(abi), net_bind_tcp | net_connect_tcp,
    scope_abstract_unix_socket | scope_signal};
  size_t size = abi >= 6   ? sizeof(ruleset_attr)
                : abi >= 4 ? 2 * sizeof(uint64_t)
                           : sizeof(uint64_t);
  int ruleset = static_cast<int>(create_ruleset(&attr, size, 0));
  if (ruleset < 0)
    return errno_text("cannot create a Landlock ruleset");
  auto read = fs_execute | fs_read_file | fs_read_dir;
  std::string why;
  for (const auto& path : rules.read)
    if (why.empty())
      why = add_path(ruleset, path, read, attr.handled_access_fs);
  for (const auto& path : rules.write)
    if (why.empty())
      why = add_path(ruleset, path, ~0ULL, attr.handled_access_fs);
  if (why.empty() && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    why = errno_text("cannot set no_new_privs");
  if (why.empty() && restrict_self(ruleset) != 0)
    why = errno_text("cannot enforce the Landlock ruleset");
  ::close(ruleset);
  return why;
}

std::vector<std::string> system_read_paths() {
  return {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
    "/opt", "/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/localtime",
    "/etc/os-release", "/etc/lsb-release", "/etc/debian_version",
    "/etc/redhat-release", "/dev/null"};
}

} // namespace eat::devices
