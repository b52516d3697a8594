#include "actors/agent/cli_process.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"

namespace eat {

using devices::unique_fd;
using clock_type = std::chrono::steady_clock;

namespace {

/// Blocks SIGPIPE on this thread while a child's stdin is written, so that a
/// child that exits without reading cannot kill us; a SIGPIPE raised
/// meanwhile is consumed before the mask is restored.
class sigpipe_guard {
public:
  sigpipe_guard() {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old_);
  }

  ~sigpipe_guard() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&old_, SIGPIPE)) {
      sigset_t pipe_only;
      sigemptyset(&pipe_only);
      sigaddset(&pipe_only, SIGPIPE);
      timespec zero{0, 0};
      sigtimedwait(&pipe_only, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

  sigpipe_guard(const sigpipe_guard&) = delete;
  sigpipe_guard& operator=(const sigpipe_guard&) = delete;

private:
  sigset_t old_;
};

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

/// The parent's ends of the child's three standard streams.
struct child_pipes {
  unique_fd in;
  unique_fd out;
  unique_fd err;
};

/// A started child: its pid, a pidfd, and the parent's pipe ends.
struct started_child {
  pid_t pid = -1;
  unique_fd pidfd;
  child_pipes pipes;
};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

/// Seconds the pump waits beyond kill_grace_s for a keeper, which kills and
/// reaps what is left once kill_grace_s has passed.
constexpr double keeper_margin_s = 5;

/// The command to start: spec.argv, under the keeper if there is one.
std::vector<std::string> spawned_argv(const cli_run_spec& spec) {
  if (spec.keeper.empty())
    return spec.argv;
  std::vector<std::string> argv{spec.keeper, "--parent",
    std::to_string(::getpid()), "--grace", seconds_text(spec.kill_grace_s)};
  if (!spec.namespaces)
    argv.emplace_back("--no-namespaces");
  for (const auto& m : spec.mounts) {
    if (!m.source.empty()) {
      argv.insert(argv.end(), {"--bind", m.source, m.path});
      continue;
    }
    argv.emplace_back(m.hidden     ? "--hide"
                      : m.writable ? "--writable"
                                   : "--read-only");
    argv.push_back(m.path);
  }
  argv.emplace_back("--");
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return argv;
}

caf::expected<started_child> start_child(const cli_run_spec& spec) {
  if (spec.argv.empty())
    return make_error(error::agent_failed, "cannot start an empty command");
  auto in = devices::make_pipe();
  auto out = devices::make_pipe();
  auto err = devices::make_pipe();
  if (!in || !out || !err)
    return make_error(error::agent_failed, "cannot open pipes for "
                                             + spec.argv[0]);
  spawn_setup setup;
  auto* fa = &setup.actions;
  posix_spawn_file_actions_addchdir_np(fa, spec.cwd.c_str());
  if (spec.stdin_data.empty())
    posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
  else
    posix_spawn_file_actions_adddup2(fa, in->read.get(), 0);
  posix_spawn_file_actions_adddup2(fa, out->write.get(), 1);
  posix_spawn_file_actions_adddup2(fa, err->write.get(), 2);
  // Nothing else of eat's: a CLI wrote the run's log through the store's
  // descriptor, read-only mount or not (red team).
  posix_spawn_file_actions_addclosefrom_np(fa, 3);
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  // A session of its own (so also a group of its own, which the stop
  // signals go to) and no controlling terminal: through eat's terminal a
  // CLI pushed commands into the operator's shell (TIOCSTI, red team).
  posix_spawnattr_setflags(&setup.attr,
    POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setsigdefault(&setup.attr, &all);
  auto args = spawned_argv(spec);
  std::vector<char*> argv;
  for (const auto& arg : args)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& var : spec.env)
    envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);
  started_child child;
  int rc = posix_spawn(&child.pid, argv[0], fa, &setup.attr, argv.data(),
                       envp.data());
  if (rc != 0)
    return make_error(error::agent_failed,
      "cannot start " + args[0] + ": " + std::strerror(rc));
  // Glibc 2.36's <sys/pidfd.h> lacks extern "C": use the system call.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child.pid, 0));
  if (pidfd < 0) {
    ::kill(-child.pid, SIGKILL);
    ::waitpid(child.pid, nullptr, 0);
    return make_error(error::agent_failed, "pidfd_open failed for "
                                             + spec.argv[0]);
  }
  child.pidfd = unique_fd{pidfd};
  if (!spec.stdin_data.empty()) {
    child.pipes.in = std::move(in->write);
    ::fcntl(child.pipes.in.get(), F_SETFL, O_NONBLOCK);
  }
  child.pipes.out = std::move(out->read);
  child.pipes.err = std::move(err->read);
  return child;
}

/// How often a running process looks at its halt flag, and wakes its keeper
/// should the program have stopped it (SIGSTOP).
constexpr auto halt_poll = std::chrono::milliseconds{200};

/// Drives one child: pumps its pipes, enforces the deadlines, stops it.
class cli_pump {
public:
  cli_pump(const cli_run_spec& spec, started_child child)
    : spec_(spec), child_(std::move(child)) {
    start_ = clock_type::now();
    last_output_ = start_;
    deadline_ = start_ + as_duration(spec.timeout_s);
  }

  cli_run_result run() {
    while (step())
      ; // until done
    if (!exited_)
      ::kill(-child_.pid, SIGKILL);
    result_.status = reap();
    // A keeper that had to kill the CLI dies of SIGKILL itself.
    if (!spec_.keeper.empty() && result_.end != cli_end::exited
        && result_.status.signal == SIGKILL)
      result_.killed = true;
    flush_line();
    trim(result_.output, spec_.max_output, &result_.dropped);
    trim(result_.errors, spec_.max_errors, nullptr);
    result_.seconds
      = std::chrono::duration<double>(clock_type::now() - start_).count();
    return std::move(result_);
  }

private:
  enum class phase { running, terminating, draining };

  static clock_type::duration as_duration(double s) {
    return std::chrono::duration_cast<clock_type::duration>(
      std::chrono::duration<double>(std::max(s, 0.0)));
  }

  /// One round: checks deadlines, then polls until the next one. Returns
  /// false when the run is over.
  bool step() {
    auto now = clock_type::now();
    auto until = now;
    switch (phase_) {
      case phase::running:
        if (exited_)
          return begin_drain(), true;
        if (!spec_.keeper.empty())
          ::kill(child_.pid, SIGCONT); // a keeper the program stopped
        if (now >= deadline_)
          return stop(cli_end::timed_out), true;
        if (spec_.halt != nullptr && spec_.halt->load())
          return stop(cli_end::halted), true;
        if (now >= last_output_ + as_duration(spec_.idle_timeout_s))
          return stop(cli_end::idle), true;
        until = std::min(deadline_,
                         last_output_ + as_duration(spec_.idle_timeout_s));
        if (spec_.halt != nullptr || !spec_.keeper.empty())
          until = std::min(until, now + halt_poll);
        break;
      case phase::terminating:
        if (exited_)
          return begin_drain(), true;
        if (now >= grace_end_) {
          result_.killed = true;
          return begin_drain(), true;
        }
        until = grace_end_;
        break;
      case phase::draining:
        if ((!child_.pipes.out && !child_.pipes.err) || now >= drain_end_)
          return false;
        until = drain_end_;
        break;
    }
    poll_until(until);
    return true;
  }

  /// SIGTERM to the group, or to the keeper, which passes it on and kills
  /// the group once the grace period is over; SIGKILL to the group follows
  /// in step() if nothing has exited by then.
  void stop(cli_end why) {
    result_.end = why;
    bool kept = !spec_.keeper.empty();
    ::kill(kept ? child_.pid : -child_.pid, SIGTERM);
    if (kept)
      ::kill(child_.pid, SIGCONT); // a keeper the program stopped
    grace_end_
      = clock_type::now()
        + as_duration(spec_.kill_grace_s + (kept ? keeper_margin_s : 0.0));
    phase_ = phase::terminating;
    child_.pipes.in.reset();
  }

  /// The leader is gone (or must go now): kill what is left of the group,
  /// then read what is still buffered in the pipes.
  void begin_drain() {
    // The group id stays reserved until the leader is reaped.
    ::kill(-child_.pid, SIGKILL);
    phase_ = phase::draining;
    drain_end_ = clock_type::now() + std::chrono::seconds(1);
    child_.pipes.in.reset();
  }

  void poll_until(clock_type::time_point until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - clock_type::now());
    int ms = static_cast<int>(
      std::clamp<int64_t>(left.count() + 1, 0, 60'000));
    pollfd fds[4] = {
      {child_.pipes.out.get(), POLLIN, 0},
      {child_.pipes.err.get(), POLLIN, 0},
      {child_.pipes.in.get(), POLLOUT, 0},
      {exited_ ? -1 : child_.pidfd.get(), POLLIN, 0},
    };
    int rc = ::poll(fds, 4, ms);
    if (rc <= 0)
      return;
    if (fds[0].revents != 0)
      read_from(child_.pipes.out, true);
    if (fds[1].revents != 0)
      read_from(child_.pipes.err, false);
    if (fds[2].revents != 0)
      write_stdin();
    if (fds[3].revents != 0)
      exited_ = true;
  }

  void read_from(unique_fd& fd, bool is_stdout) {
    char buf[65536];
    auto n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      return;
    if (n <= 0) {
      fd.reset();
      return;
    }
    last_output_ = clock_type::now();
    std::string_view chunk{buf, static_cast<size_t>(n)};
    if (!is_stdout) {
      append_tail(result_.errors, chunk, spec_.max_errors, nullptr);
      return;
    }
    append_tail(result_.output, chunk, spec_.max_output, &result_.dropped);
    feed_lines(chunk);
  }

  void feed_lines(std::string_view chunk) {
    for (;;) {
      auto nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        line_.append(chunk);
        if (line_.size() >= spec_.max_output)
          flush_line();
        return;
      }
      line_.append(chunk.substr(0, nl));
      flush_line();
      chunk.remove_prefix(nl + 1);
    }
  }

  void flush_line() {
    if (line_.empty())
      return;
    bool keep_going = !spec_.on_line || spec_.on_line(line_);
    line_.clear();
    if (!keep_going && phase_ == phase::running && !exited_)
      stop(cli_end::stopped);
  }

  void write_stdin() {
    auto& data = spec_.stdin_data;
    sigpipe_guard guard;
    auto n = ::write(child_.pipes.in.get(), data.data() + written_,
                     data.size() - written_);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      return;
    if (n < 0) {
      child_.pipes.in.reset();
      return;
    }
    written_ += static_cast<size_t>(n);
    if (written_ >= data.size())
      child_.pipes.in.reset();
  }

  static void append_tail(std::string& buf, std::string_view chunk,
                          size_t max, size_t* dropped) {
    buf.append(chunk);
    if (buf.size() > 2 * max + 65536)
      trim(buf, max, dropped);
  }

  static void trim(std::string& buf, size_t max, size_t* dropped) {
    if (buf.size() <= max)
      return;
    auto excess = buf.size() - max;
    buf.erase(0, excess);
    if (dropped)
      *dropped += excess;
  }

  devices::exit_status reap() {
    int raw = 0;
    while (::waitpid(child_.pid, &raw, 0) < 0 && errno == EINTR)
      ; // retry
    devices::exit_status st;
    if (WIFEXITED(raw)) {
      st.exited = true;
      st.code = WEXITSTATUS(raw);
    } else if (WIFSIGNALED(raw)) {
      st.signal = WTERMSIG(raw);
    }
    return st;
  }

  const cli_run_spec& spec_;
  started_child child_;
  cli_run_result result_;
  phase phase_ = phase::running;
  bool exited_ = false;
  size_t written_ = 0;
  std::string line_;
  clock_type::time_point start_;
  clock_type::time_point last_output_;
  clock_type::time_point deadline_;
  clock_type::time_point grace_end_;
  clock_type::time_point drain_end_;
};

} // namespace

caf::expected<std::filesystem::path>
find_program(const std::string& program, std::string_view path_list) {
  auto runnable = [](const std::filesystem::path& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)
           && ::access(p.c_str(), X_OK) == 0;
  };
  if (program.empty())
    return make_error(error::agent_failed, "no program given");
  if (program.find('/') != std::string::npos) {
    if (runnable(program))
      return std::filesystem::path{program};
    return make_error(error::agent_failed,
                      "program '" + program + "' not found or not executable");
  }
  while (!path_list.empty()) {
    auto colon = path_list.find(':');
    auto dir = path_list.substr(0, colon);
    path_list.remove_prefix(colon == std::string_view::npos ? path_list.size()
                                                            : colon + 1);
    if (dir.empty())
      continue; // an empty entry means ".": never search the workspace
    auto candidate = std::filesystem::path{dir} / program;
    if (runnable(candidate))
      return candidate;
  }
  return make_error(error::agent_failed,
                    "program '" + program + "' not found in PATH");
}

std::vector<std::string> allowed_environment(
  const std::vector<std::string>& allow) {
  std::vector<std::string> env;
  for (const auto& name : allow) {
    if (name.empty() || name.find('=') != std::string::npos)
      continue;
    if (std::any_of(env.begin(), env.end(), [&](const std::string& e) {
          return e.compare(0, name.size() + 1, name + "=") == 0;
        }))
      continue;
    if (const char* value = std::getenv(name.c_str()))
      env.push_back(name + "=" + value);
  }
  return env;
}

caf::expected<cli_run_result> run_cli_process(const cli_run_spec& spec) {
  auto child = start_child(spec);
  if (!child)
    return std::move(child.error());
  if (spec.on_start)
    spec.on_start(child->pid);
  cli_pump pump{spec, std::move(*child)};
  return pump.run();
}

std::string describe_end(const cli_run_result& r, const cli_run_spec& spec) {
  switch (r.end) {
    case cli_end::timed_out:
      return "timed out after " + seconds_text(spec.timeout_s) + " s";
    case cli_end::idle:
      return "idle: no output for " + seconds_text(spec.idle_timeout_s)
             + " s";
    case cli_end::stopped:
      return "stopped";
    case cli_end::halted: return "stopped: the run is ending";
    case cli_end::exited:
      break;
  }
  return devices::to_string(r.status);
}

} // namespace eat
