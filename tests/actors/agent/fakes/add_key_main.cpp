// A CLI's attempt at the kernel's keyrings, for the keeper's tests: adds a
// key to its own process keyring (gone when it exits) and prints
// "add_key: ok" or "add_key: <error>".

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <sys/syscall.h>
#include <unistd.h>

int main() {
  constexpr long process_keyring = -2; // KEY_SPEC_PROCESS_KEYRING
  const char secret[] = "planted";
  long key = ::syscall(SYS_add_key, "user", "eat-keeper-test", secret,
    sizeof(secret) - 1, process_keyring);
  std::printf("add_key: %s\n", key >= 0 ? "ok" : std::strerror(errno));
  return 0;
}
