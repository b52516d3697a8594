#include "devices/runner/cgroups.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace eat::devices {

namespace {

constexpr const char* prefix = "eat-runner.";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in{s};
  while (std::getline(in, part, sep))
    out.push_back(part);
  return out;
}

bool has_token(const std::string& list, const std::string& token) {
  for (const auto& t : split(list, ','))
    if (t == token)
      return true;
  return false;
}

/// Writes `text` to the file at `path`; an empty string, or the error.
std::string write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return path + ": " + std::strerror(errno);
  auto n = ::write(fd, text.data(), text.size());
  auto err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return path + ": " + std::strerror(n < 0 ? err : EIO);
  return {};
}

/// A cgroup hierarchy's mount: its mount point and the hierarchy path
/// mounted there.
struct mount {
  std::string point;
  std::string root;
};

/// The mount of the cgroup v1 hierarchy with `controller`, or of cgroup v2
/// (`v2` says which was found).
bool find_mount(const std::string& controller, mount& m, bool& v2) {
  std::ifstream in{"/proc/self/mountinfo"};
  mount found_v2;
  bool have_v2 = false;
  for (std::string line; std::getline(in, line);) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos)
      continue;
    auto head = split(line.substr(0, dash), ' ');
    auto tail = split(line.substr(dash + 3), ' ');
    if (head.size() < 5 || tail.size() < 3)
      continue;
    if (tail[0] == "cgroup" && has_token(tail[2], controller)) {
      m = {head[4], head[3]};
      v2 = false;
      return true;
    }
    if (tail[0] == "cgroup2" && !have_v2) {
      found_v2 = {head[4], head[3]};
      have_v2 = true;
    }
  }
  m = found_v2;
  v2 = true;
  return have_v2;
}

/// This process's cgroup path in the hierarchy (v1: the line naming
/// `controller`; v2: the "0::" line).
std::string own_path(const std::string& controller, bool v2) {
  std::ifstream in{"/proc/self/cgroup"};
  for (std::string line; std::getline(in, line);) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    auto controllers = line.substr(first + 1, second - first - 1);
    if (v2 ? line.compare(0, 3, "0::") == 0
           : has_token(controllers, controller))
      return line.substr(second + 1);
  }
  return {};
}

/// Removes the empty cgroups of runners that are gone.
void remove_stale(const std::string& parent) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr)
    return;
  const std::string p{prefix};
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, p.size(), p) != 0)
      continue;
    auto digits = name.substr(p.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != digits.npos)
      continue;
    auto pid = static_cast<pid_t>(std::stol(digits));
    if (::kill(pid, 0) != 0 && errno == ESRCH)
      ::rmdir((parent + "/" + name).c_str()); // fails if still in use
  }
  ::closedir(d);
}

/// The directory of this process's cgroup in the hierarchy of
/// `controller` (v1) or in cgroup v2; empty, with `why_not`, if none.
std::string own_dir(const std::string& controller, runner_cgroup& cg) {
  mount m;
  if (!find_mount(controller, m, cg.v2)) {
    cg.why_not = "no cgroup file system with the " + controller + " controller";
    return {};
  }
  auto path = own_path(controller, cg.v2);
  if (path.empty()) {
    cg.why_not = "this process's cgroup is not in /proc/self/cgroup";
    return {};
  }
  // Below a mount of part of the hierarchy (a container), the path starts
  // with the mounted root.
  if (m.root != "/" && path.compare(0, m.root.size(), m.root) == 0)
    path = path.substr(m.root.size());
  return m.point + (path == "/" ? "" : path);
}

/// Makes eat-runner.<pid> in `base`, writes `settings` (file, value) into
/// it and moves this process into it.
void make_and_enter(const std::string& base,
  const std::vector<std::pair<std::string, std::string>>& settings,
  runner_cgroup& cg) {
  remove_stale(base);
  auto dir = base + "/" + prefix + std::to_string(::getpid());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    cg.why_not = "cannot create " + dir + ": " + std::strerror(errno);
    return;
  }
  std::string why;
  for (const auto& [file, value] : settings)
    if (why.empty())
      why = write_file(dir + "/" + file, value);
  if (why.empty())
    why = write_file(dir + "/cgroup.procs", std::to_string(::getpid()));
  if (!why.empty()) {
    ::rmdir(dir.c_str());
    cg.why_not = why;
    return;
  }
  cg.dir = dir;
  cg.parent = base;
}

} // namespace

runner_cgroup enter_pids_cgroup(uint64_t max_tasks) {
  runner_cgroup cg;
  auto base = own_dir("pids", cg);
  if (base.empty())
    return cg;
  if (cg.v2) {
    std::ifstream controllers{base + "/cgroup.subtree_control"};
    std::string enabled;
    std::getline(controllers, enabled);
    bool has_pids = false;
    for (const auto& c : split(enabled, ' '))
      has_pids = has_pids || c == "pids";
    if (!has_pids) {
      cg.why_not
        = "the pids controller is not enabled for " + base + "'s children";
      return cg;
    }
  }
  make_and_enter(base, {{"pids.max", std::to_string(max_tasks)}}, cg);
  return cg;
}

runner_cgroup enter_cpu_cgroup(const runner_cgroup& pids) {
  runner_cgroup cg;
  auto base = own_dir("cpuacct", cg);
  if (base.empty())
    return cg;
  // Under v2 the pids cgroup, when there is one, is this process's.
  if (cg.v2 && pids.v2 && !pids.dir.empty())
    return pids;
  make_and_enter(base, {}, cg);
  return cg;
}

std::string cpu_time_file(const runner_cgroup& cg) {
  return cg.dir + (cg.v2 ? "/cpu.stat" : "/cpuacct.usage");
}

int64_t parse_cgroup_cpu_ns(const std::string& text, bool v2) {
  std::istringstream in{text};
  if (!v2) {
    int64_t ns = -1;
    return in >> ns && ns >= 0 ? ns : -1;
  }
  std::string key;
  int64_t value = 0;
  while (in >> key >> value)
    if (key == "usage_usec")
      return value >= 0 ? value * 1000 : -1;
  return -1;
}

std::string leave_cgroup(const runner_cgroup& cg) {
  if (cg.dir.empty())
    return {};
  if (auto why
      = write_file(cg.parent + "/cgroup.procs", std::to_string(::getpid()));
      !why.empty())
    return why;
  // The namespace's last processes may still be on their way out.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (::rmdir(cg.dir.c_str()) == 0 || errno == ENOENT)
      return {};
    if (errno != EBUSY)
      break;
    timespec ms{0, 1000 * 1000};
    ::nanosleep(&ms, nullptr);
  }
  return "cannot remove " + cg.dir + ": " + std::strerror(errno);
}

} // namespace eat::devices
