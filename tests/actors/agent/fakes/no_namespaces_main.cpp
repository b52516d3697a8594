// A kernel that refuses namespaces, for the keeper's tests: makes unshare
// fail (EPERM, as where user namespaces are disabled or restricted by
// AppArmor) for itself and what it runs, then runs its arguments.
// Usage: eat_cli_fake_no_namespaces PROGRAM [ARG...]

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <sys/syscall.h>
#include <unistd.h>

#include "devices/runner/seccomp_filter.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM [ARG...]\n", argv[0]);
    return 125;
  }
  if (auto why = eat::devices::refuse_system_calls({SYS_unshare});
      !why.empty()) {
    std::fprintf(stderr, "no_namespaces: %s\n", why.c_str());
    return 125;
  }
  ::execv(argv[1], argv + 1);
  std::fprintf(stderr, "no_namespaces: cannot run %s: %s\n", argv[1],
    std::strerror(errno));
  return 127;
}
