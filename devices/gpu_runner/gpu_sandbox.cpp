#include "devices/gpu_runner/gpu_sandbox.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace eat::devices {

namespace {

std::string set_limit(int resource, const char* name, rlim_t soft, rlim_t hard) {
  rlimit lim{soft, hard};
  if (::setrlimit(resource, &lim) != 0)
    return std::string{"setrlimit("} + name + "): " + std::strerror(errno);
  return {};
}

std::string apply_limits(const runner_limits& limits) {
  constexpr rlim_t mib = rlim_t{1} << 20;
  auto fsize = static_cast<rlim_t>(limits.file_size_mib) * mib;
  auto cpu = static_cast<rlim_t>(limits.cpu_s);
  auto nproc = static_cast<rlim_t>(user_task_count() + limits.extra_tasks);
  for (auto err : {set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0),
         set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", fsize, fsize),
         set_limit(RLIMIT_CPU, "RLIMIT_CPU", cpu, cpu + 1),
         set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", nproc, nproc)})
    if (!err.empty())
      return err;
  return {};
}

std::string pin(int32_t core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (core < 0 || core >= CPU_SETSIZE)
    return "core " + std::to_string(core) + " is out of range";
  CPU_SET(core, &set);
  if (::sched_setaffinity(0, sizeof(set), &set) != 0)
    return "cannot pin to core " + std::to_string(core) + ": "
           + std::strerror(errno);
  return {};
}

} // namespace

sandbox_report apply_gpu_sandbox(const runner_limits& limits, int32_t core) {
  sandbox_report report;
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::close_range(runner_reply_fd + 1, ~0U, 0);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    report.error = std::string{"PR_SET_NO_NEW_PRIVS: "} + std::strerror(errno);
    return report;
  }
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  report.network_isolated = ::unshare(CLONE_NEWNET) == 0;
  if (report.error = pin(core); !report.error.empty())
    return report;
  report.core = core;
  report.error = apply_limits(limits);
  return report;
}

} // namespace eat::devices
