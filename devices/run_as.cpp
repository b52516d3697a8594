#include "devices/run_as.hpp"

#include <vector>

#include <pwd.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"

namespace eat::devices {

caf::error resolve_run_as(
  const std::string& device, const std::string& user, run_as_ids& ids) {
  ids = {};
  if (::geteuid() != 0 || user.empty())
    return {};
  std::vector<char> buf(16384);
  passwd entry;
  passwd* found = nullptr;
  if (::getpwnam_r(user.c_str(), &entry, buf.data(), buf.size(), &found) != 0
      || found == nullptr)
    return make_error(error::invalid_config,
      device + ": run_as: no user \"" + user
        + "\" on this machine (run_as = \"\" runs kernel code as root)");
  ids.uid = entry.pw_uid;
  ids.gid = entry.pw_gid;
  return {};
}

std::string kernel_user_note(int64_t uid) {
  return uid == 0 ? "kernel code run as root"
                  : "kernel code run as uid " + std::to_string(uid);
}

std::string isolation_note(const runner_reply& r) {
  return std::string{"network "}
         + (r.network_isolated ? "isolated" : "not isolated")
         + (r.pid_isolated ? "; kernel processes in their own PID namespace"
                           : "; kernel processes in the host's PID namespace")
         + (r.tasks_capped ? "; tasks capped by a pids cgroup"
                           : "; tasks capped by RLIMIT_NPROC alone");
}

} // namespace eat::devices
