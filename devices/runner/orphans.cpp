#include "devices/runner/orphans.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace eat::devices {

namespace {

/// The parent pid in /proc/<pid>/stat, or -1: the field after the state,
/// which follows the last ')' (a command name may hold one).
pid_t parent_of(const char* pid) {
  std::ifstream in{std::string{"/proc/"} + pid + "/stat"};
  std::string stat{std::istreambuf_iterator<char>{in}, {}};
  auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size())
    return -1;
  // ") S 1234 ..."
  return static_cast<pid_t>(std::atol(stat.c_str() + close + 4));
}

/// The pids of this process's children, found in /proc.
std::vector<pid_t> children() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr)
    return out;
  while (auto* entry = ::readdir(dir)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
      continue;
    if (parent_of(entry->d_name) == self)
      out.push_back(static_cast<pid_t>(std::atol(entry->d_name)));
  }
  ::closedir(dir);
  return out;
}

} // namespace

bool adopt_orphans() {
  return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

size_t end_children(double limit_s) {
  std::set<pid_t> killed;
  auto deadline
    = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < deadline) {
    auto found = children();
    for (auto pid : found)
      if (::kill(pid, SIGKILL) == 0)
        killed.insert(pid);
    // Reap whatever has ended; a killed child's own children are ours now
    // and show up in the next scan.
    pid_t got = 0;
    while ((got = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
    }
    if (found.empty() && got < 0 && errno == ECHILD)
      break;
    ::sched_yield();
  }
  return killed.size();
}

} // namespace eat::devices
