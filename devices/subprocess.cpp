#include "devices/subprocess.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"

extern char** environ;

namespace eat::devices {

namespace {

/// Owns posix_spawn's attribute and file-action objects.
struct spawn_setup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;

  spawn_setup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }

  ~spawn_setup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }

  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;
};

void describe_fds(spawn_setup& setup, const process_spec& spec) {
  auto* fa = &setup.actions;
  if (!spec.cwd.empty())
    posix_spawn_file_actions_addchdir_np(fa, spec.cwd.c_str());
  bool standard_set[3] = {false, false, false};
  auto mark = [&](int child) {
    if (child >= 0 && child < 3)
      standard_set[child] = true;
  };
  for (const auto& [child, parent] : spec.fds) {
    posix_spawn_file_actions_adddup2(fa, parent, child);
    mark(child);
  }
  for (const auto& [child, path] : spec.files) {
    posix_spawn_file_actions_addopen(
      fa, child, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    mark(child);
  }
  for (int fd = 0; fd < 3; ++fd)
    if (!standard_set[fd])
      posix_spawn_file_actions_addopen(
        fa, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  // Nothing else of eat's: its store's files are open for writing.
  int first_free = 3;
  for (const auto& [child, parent] : spec.fds)
    first_free = std::max(first_free, child + 1);
  for (const auto& [child, path] : spec.files)
    first_free = std::max(first_free, child + 1);
  posix_spawn_file_actions_addclosefrom_np(fa, first_free);
}

void describe_attributes(spawn_setup& setup) {
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  // A session of its own, which is also a process group of its own (the
  // group kill), and no controlling terminal: through eat's terminal a
  // runner's kernel could stop the whole group or push characters into
  // the terminal's input (TIOCSTI), as if typed in the shell that ran eat.
  posix_spawnattr_setflags(&setup.attr,
    POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setsigdefault(&setup.attr, &all);
}

/// The parent's environment with `extra` ("NAME=value") set over it and
/// the variables named bare in `extra` ("NAME") removed, and unless
/// `keep_secrets` only its variables that inherited_name allows and that
/// do not look secret, as posix_spawn takes it; the pointers stay valid
/// while environ and `extra` are unchanged.
std::vector<char*> child_environment(
  const std::vector<std::string>& extra, bool keep_secrets) {
  auto overridden = [&](const char* entry) {
    for (const auto& e : extra) {
      auto name = e.substr(0, e.find('=')) + '=';
      if (std::strncmp(entry, name.c_str(), name.size()) == 0)
        return true;
    }
    std::string_view text{entry};
    auto name = text.substr(0, text.find('='));
    return !keep_secrets && (!inherited_name(name) || secret_name(name));
  };
  std::vector<char*> env;
  for (char** p = environ; *p != nullptr; ++p)
    if (!overridden(*p))
      env.push_back(*p);
  for (const auto& e : extra)
    if (e.find('=') != std::string::npos)
      env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  return env;
}

std::string errno_text(const std::string& what, int code) {
  return what + ": " + std::strerror(code);
}

} // namespace

bool inherited_name(std::string_view name) {
  for (const char* exact : {"PATH", "HOME", "USER", "LOGNAME", "LANG",
         "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH",
         "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "GCC_EXEC_PREFIX",
         "COMPILER_PATH", "DEVICE_LIB_PATH"})
    if (name == exact)
      return true;
  for (const char* prefix : {"LC_", "EAT_", "CUDA_", "NVCC_", "NVIDIA_", "HIP_",
         "HIPCC_", "ROCM_", "ROCR_", "HSA_", "AMD_", "GPU_", "OPENBLAS_",
         "OMP_", "GOMP_", "ASAN_", "LSAN_", "UBSAN_", "TSAN_"})
    if (name.rfind(prefix, 0) == 0)
      return true;
  return false;
}

bool secret_name(std::string_view name) {
  std::string upper{name};
  for (auto& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* word :
    {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"})
    if (upper.find(word) != std::string::npos)
      return true;
  return false;
}

std::string signal_name(int sig) {
  if (const char* abbrev = sigabbrev_np(sig))
    return std::string{"SIG"} + abbrev;
  return "signal " + std::to_string(sig);
}

std::string to_string(const exit_status& x) {
  if (x.exited)
    return "exited with status " + std::to_string(x.code);
  return "killed by " + signal_name(x.signal);
}

caf::expected<child_process> child_process::spawn(const process_spec& spec) {
  if (spec.argv.empty())
    return make_error(error::io_failure, "cannot spawn an empty command");
  spawn_setup setup;
  describe_fds(setup, spec);
  describe_attributes(setup);
  std::vector<char*> argv;
  for (const auto& arg : spec.argv)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  auto env = child_environment(spec.env, spec.keep_secrets);
  pid_t pid = -1;
  auto start = [&] {
    return posix_spawnp(
      &pid, argv[0], &setup.actions, &setup.attr, argv.data(), env.data());
  };
  int rc = 0;
  if (spec.confine) {
    // Landlock confines a thread and what it starts: a short-lived one
    // takes the confinement and spawns, and the caller's stays free.
    std::string why;
    try {
      std::thread confined{[&] {
        why = landlock_confine(*spec.confine);
        if (why.empty())
          rc = start();
      }};
      confined.join();
    } catch (const std::system_error& e) {
      why = std::string{"cannot start a thread: "} + e.what();
    }
    if (!why.empty())
      return make_error(error::io_failure,
        "cannot confine " + spec.argv[0] + " (Landlock): " + why);
  } else {
    rc = start();
  }
  if (rc != 0)
    return make_error(
      error::io_failure, errno_text("cannot start " + spec.argv[0], rc));
  // Glibc 2.36's <sys/pidfd.h> lacks extern "C": use the system call.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    auto code = errno;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return make_error(error::io_failure, errno_text("pidfd_open", code));
  }
  return child_process{pid, unique_fd{pidfd}};
}

child_process::child_process(pid_t pid, unique_fd pidfd)
  : pid_(pid), pidfd_(std::move(pidfd)) {
  // nop
}

child_process::child_process(child_process&& other) noexcept
  : pid_(std::exchange(other.pid_, -1)), pidfd_(std::move(other.pidfd_)),
    reaped_(other.reaped_), status_(other.status_) {
  // nop
}

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !reaped_)
      reap();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::move(other.pidfd_);
    reaped_ = other.reaped_;
    status_ = other.status_;
  }
  return *this;
}

child_process::~child_process() {
  if (pid_ > 0 && !reaped_)
    reap();
}

bool child_process::wait_until(steady_time deadline) const {
  return wait_readable(pidfd_.get(), deadline);
}

void child_process::kill_group() {
  // The group id stays reserved until the leader is reaped, so this can
  // never hit an unrelated group.
  if (pid_ > 0 && !reaped_)
    ::kill(-pid_, SIGKILL);
}

exit_status child_process::reap() {
  if (reaped_ || pid_ <= 0)
    return status_;
  kill_group();
  int raw = 0;
  while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR)
    ; // retry
  reaped_ = true;
  if (WIFEXITED(raw)) {
    status_.exited = true;
    status_.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    status_.signal = WTERMSIG(raw);
  }
  return status_;
}

steady_time deadline_in(double seconds) {
  auto span = std::chrono::duration<double>(std::max(seconds, 0.0));
  return std::chrono::steady_clock::now()
         + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
           span);
}

bool wait_readable(int fd, steady_time deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    // Round up so that we never spin on a 0 ms timeout before the deadline.
    auto ms = std::max<int64_t>(0, left.count() + 1);
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 60'000)));
    if (rc > 0)
      return true;
    if (rc < 0 && errno != EINTR)
      return false;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
  }
}

caf::expected<captured_run> run_captured(const std::vector<std::string>& argv,
  const std::string& cwd, double timeout_s, size_t max_output) {
  process_spec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  return run_captured(spec, timeout_s, max_output);
}

caf::expected<captured_run> run_captured(
  const process_spec& given, double timeout_s, size_t max_output) {
  auto start = std::chrono::steady_clock::now();
  auto deadline = deadline_in(timeout_s);
  auto pipe = make_pipe();
  if (!pipe)
    return std::move(pipe.error());
  auto spec = given;
  spec.fds.emplace_back(1, pipe->write.get());
  spec.fds.emplace_back(2, pipe->write.get());
  auto child = child_process::spawn(spec);
  if (!child)
    return std::move(child.error());
  pipe->write.reset();
  captured_run result;
  char buf[65536];
  for (;;) {
    if (!wait_readable(pipe->read.get(), deadline)) {
      result.timed_out = true;
      break;
    }
    auto n = ::read(pipe->read.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    auto keep = std::min(static_cast<size_t>(n),
      max_output - std::min(max_output, result.output.size()));
    result.output.append(buf, keep);
    result.dropped += static_cast<size_t>(n) - keep;
  }
  if (!result.timed_out && !child->wait_until(deadline))
    result.timed_out = true;
  result.status = child->reap();
  result.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  return result;
}

} // namespace eat::devices
