#include "actors/agent/keeper.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/agent/keeper_mounts.hpp"
#include "devices/runner/orphans.hpp"
#include "devices/runner/seccomp_filter.hpp"
#include "devices/runner/user_namespace.hpp"

namespace eat {

namespace {

using clock_type = std::chrono::steady_clock;

/// Exit status when the keeper itself cannot start.
constexpr int keeper_failed = 125;
/// Exit status when the program cannot be run (as a shell says it).
constexpr int cannot_run = 127;

struct keeper_args {
  pid_t parent = 0;
  double grace_s = 5;
  /// Whether the program runs in PID and mount namespaces of its own
  /// (where the kernel allows them).
  bool namespaces = true;
  /// Paths made read-only, writable or hidden for the program, in this
  /// order.
  std::vector<keeper_mount> mounts;
  char** program = nullptr;
};

/// The program as the keeper sees it once started.
struct started_program {
  /// The program, or the init of its PID namespace; -1 when it could not
  /// be started.
  pid_t pid = -1;
  /// Where init writes the program's wait status; -1 without a namespace.
  int status_fd = -1;
  /// Who a request to stop goes to: the keeper's own group (0), or the
  /// group of the namespace's processes.
  pid_t group = 0;
};

int complain(const std::string& what) {
  std::fprintf(stderr, "eat-keeper: %s\n", what.c_str());
  return keeper_failed;
}

/// Parses "--parent PID --grace S -- PROGRAM ARGS..."; false after saying
/// why on stderr.
bool parse(int argc, char** argv, keeper_args& out) {
  int i = 1;
  for (; i + 1 < argc && std::strcmp(argv[i], "--") != 0; i += 2) {
    char* end = nullptr;
    if (std::strcmp(argv[i], "--no-namespaces") == 0) {
      out.namespaces = false;
      i -= 1; // takes no value
    } else if (std::strcmp(argv[i], "--read-only") == 0
               || std::strcmp(argv[i], "--writable") == 0
               || std::strcmp(argv[i], "--hide") == 0) {
      if (argv[i + 1][0] != '/')
        return complain(std::string{argv[i]}
                        + ": not an absolute path: " + argv[i + 1]),
               false;
      auto kind = argv[i][2] == 'w'   ? mount_kind::writable
                  : argv[i][2] == 'h' ? mount_kind::hidden
                                      : mount_kind::read_only;
      out.mounts.push_back({argv[i + 1], kind});
    } else if (std::strcmp(argv[i], "--bind") == 0) {
      if (i + 3 >= argc || argv[i + 1][0] != '/' || argv[i + 2][0] != '/')
        return complain("--bind: needs two absolute paths, SOURCE and "
                        "PATH"),
               false;
      out.mounts.push_back({argv[i + 2], mount_kind::writable, argv[i + 1]});
      i += 1; // takes two values
    } else if (std::strcmp(argv[i], "--parent") == 0) {
      auto pid = std::strtol(argv[i + 1], &end, 10);
      if (*end != '\0' || pid <= 0)
        return complain(
                 std::string{"--parent: not a process id: "} + argv[i + 1]),
               false;
      out.parent = static_cast<pid_t>(pid);
    } else if (std::strcmp(argv[i], "--grace") == 0) {
      out.grace_s = std::strtod(argv[i + 1], &end);
      if (*end != '\0' || !std::isfinite(out.grace_s) || out.grace_s < 0)
        return complain(std::string{"--grace: not a number of seconds: "}
                        + argv[i + 1]),
               false;
    } else {
      return complain(std::string{"unknown option "} + argv[i]), false;
    }
  }
  if (i >= argc || std::strcmp(argv[i], "--") != 0 || i + 1 >= argc)
    return complain("usage: eat-keeper --parent PID [--grace SECONDS] "
                    "[--no-namespaces] [--read-only|--writable|--hide PATH]... "
                    "[--bind SOURCE PATH]... "
                    "-- PROGRAM [ARGS...]"),
           false;
  if (out.parent == 0)
    return complain("--parent is required"), false;
  out.program = argv + i + 1;
  return true;
}

/// The signals the keeper waits for instead of dying of them.
sigset_t waited_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP})
    sigaddset(&set, sig);
  return set;
}

/// Signals a process of the program could end the keeper with, which it
/// ignores (SIGKILL and SIGSTOP cannot be; eat's SIGCONT undoes a SIGSTOP).
/// A fault the keeper itself raised still ends it: the kernel does not let
/// such a signal be ignored.
constexpr int ignored_signals[] = {SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE,
  SIGPROF, SIGVTALRM, SIGIO, SIGTSTP, SIGTTIN, SIGTTOU, SIGXCPU, SIGXFSZ,
  SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};

void set_ignored_signals(void (*action)(int)) {
  for (int sig : ignored_signals)
    ::signal(sig, action);
}

/// In the new process: runs the program with the signal mask `mask`.
[[noreturn]] void exec_program(char** program, const sigset_t& mask) {
  set_ignored_signals(SIG_DFL); // an ignored signal stays so across exec
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  ::execv(program[0], program);
  std::fprintf(stderr, "eat-keeper: cannot run %s: %s\n", program[0],
    std::strerror(errno));
  ::_exit(cannot_run);
}

/// Starts the program in this process group with the signal mask `mask`.
started_program start_in_group(char** program, const sigset_t& mask) {
  started_program out;
  out.pid = ::fork();
  if (out.pid == 0)
    exec_program(program, mask);
  if (out.pid < 0)
    complain(std::string{"cannot fork: "} + std::strerror(errno));
  return out;
}

/// Points this process's stdin and stdout at /dev/null: the program has
/// its copies, and the keeper (or init) must not hold the pipes open.
void let_go_of_stdio() {
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    return;
  ::dup2(null, 0);
  ::dup2(null, 1);
  ::close(null);
}

/// The namespace's init (PID 1): mounts `args.mounts` for the program, starts
/// it in a session of its own, writes a byte to `to_keeper` (the program's
/// group is there to be signalled), reaps every process of the namespace
/// until the program ends, writes the program's wait status to `to_keeper`
/// and exits, upon which the kernel kills what is left of the namespace.
[[noreturn]] void run_init(
  const keeper_args& args, const sigset_t& mask, int to_keeper) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL); // the keeper killed: all go
  // The program's session and group, which the keeper is not in, without
  // a controlling terminal: through eat's a CLI pushed commands into the
  // operator's shell (TIOCSTI) and could send eat SIGINT (red team).
  ::setsid();
  if (!args.mounts.empty()) {
    if (auto why = make_read_only(args.mounts); !why.empty()) {
      complain("cannot make the run's files read-only for "
               + std::string{args.program[0]} + ": " + why);
      ::_exit(keeper_failed);
    }
  }
  pid_t worker = ::fork();
  if (worker == 0) {
    ::close(to_keeper);
    if (!args.mounts.empty() && ::geteuid() == 0) {
      if (auto why = give_up_capabilities(); !why.empty()) {
        complain("cannot take root's capabilities from "
                 + std::string{args.program[0]} + ": " + why);
        ::_exit(keeper_failed);
      }
    }
    if (auto why = devices::refuse_keyrings(); !why.empty()) {
      complain("cannot take the kernel's keyrings from "
               + std::string{args.program[0]} + ": " + why);
      ::_exit(keeper_failed);
    }
    if (auto why = devices::refuse_affinity_changes(); !why.empty()) {
      complain("cannot keep " + std::string{args.program[0]}
               + " on the cores eat gave it: " + why);
      ::_exit(keeper_failed);
    }
    exec_program(args.program, mask);
  }
  if (worker < 0)
    ::_exit(keeper_failed);
  const char started = 's';
  ssize_t sent;
  do
    sent = ::write(to_keeper, &started, 1);
  while (sent < 0 && errno == EINTR);
  let_go_of_stdio();
  for (;;) {
    int status = 0;
    pid_t got = ::waitpid(-1, &status, 0);
    if (got == worker) {
      ssize_t n;
      do
        n = ::write(to_keeper, &status, sizeof(status));
      while (n < 0 && errno == EINTR);
      ::_exit(0);
    }
    if (got < 0 && errno != EINTR)
      ::_exit(keeper_failed);
  }
}

/// Without namespaces: says what the program may write that it should
/// not, then starts it as start_in_group does.
started_program start_unprotected(
  const keeper_args& args, const sigset_t& mask, const char* why) {
  if (!args.mounts.empty())
    complain(std::string{why} + ": " + args.program[0]
             + " runs in eat's PID and mount namespaces, and can write the "
               "run's files");
  return start_in_group(args.program, mask);
}

/// Starts the program in new PID and mount namespaces (in a user namespace
/// of the keeper's own when it is not root), under an init of its own in
/// a process group of its own: the program sees neither the keeper nor
/// eat, so it can neither signal nor stop them, everything it starts dies
/// with it, and it writes only where `args.mounts` lets it. Where the kernel
/// refuses the namespaces, starts it as start_in_group does, after saying so.
started_program start_isolated(const keeper_args& args, const sigset_t& mask) {
  if (::geteuid() != 0) {
    auto user = devices::enter_user_namespace();
    if (!user.error.empty())
      return complain(user.error), started_program{};
    if (!user.entered)
      return start_unprotected(args, mask, "no user namespace");
  }
  int pipe_fds[2];
  // An IPC namespace too: System V shared memory was shared by every
  // team's CLI and outlived the run (red team).
  if (::unshare(CLONE_NEWPID | CLONE_NEWIPC) != 0
      || ::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return start_unprotected(args, mask, "no PID namespace");
  started_program out;
  out.pid = ::fork();
  if (out.pid == 0) {
    ::close(pipe_fds[0]);
    run_init(args, mask, pipe_fds[1]);
  }
  ::close(pipe_fds[1]);
  if (out.pid < 0) {
    ::close(pipe_fds[0]);
    complain(std::string{"cannot fork: "} + std::strerror(errno));
    return out;
  }
  out.status_fd = pipe_fds[0];
  out.group = -out.pid;
  // Until init has made the program's group, a stop sent to it would be
  // lost (ESRCH): a CLI stopped as it started ran on until the grace
  // period was over. Init says when the group is there (or dies first).
  char started = 0;
  ssize_t n;
  do
    n = ::read(out.status_fd, &started, 1);
  while (n < 0 && errno == EINTR);
  return out;
}

/// The program's wait status once `p.pid` has ended with `status`: the
/// one init wrote, or, when init died before it could (killed), init's.
int program_status(const started_program& p, int status) {
  if (p.status_fd < 0)
    return status;
  int program = 0;
  ssize_t n;
  do
    n = ::read(p.status_fd, &program, sizeof(program));
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(program)) ? program : status;
}

/// Waits until the program exits (true, its wait status in `status`) or
/// until `grace_s` after the first request to stop (false). A request to
/// stop is passed on to the program's group as SIGTERM.
bool wait_for(const started_program& program, double grace_s, int& status) {
  auto signals = waited_signals();
  bool stopping = false;
  auto deadline = clock_type::time_point::max();
  for (;;) {
    int sig = 0;
    if (!stopping) {
      sig = ::sigwaitinfo(&signals, nullptr);
    } else {
      auto left = deadline - clock_type::now();
      if (left <= clock_type::duration::zero())
        return false;
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left);
      timespec wait{static_cast<time_t>(ns.count() / 1'000'000'000),
        static_cast<long>(ns.count() % 1'000'000'000)};
      sig = ::sigtimedwait(&signals, nullptr, &wait);
    }
    if (sig < 0)
      continue; // EINTR, or EAGAIN: the loop looks at the deadline
    if (sig == SIGCHLD) {
      // Reaps adopted orphans that ended, and the program once it has.
      int st = 0;
      pid_t got = 0;
      while ((got = ::waitpid(-1, &st, WNOHANG)) > 0)
        if (got == program.pid) {
          status = program_status(program, st);
          return true;
        }
    } else if (!stopping) {
      stopping = true;
      deadline = clock_type::now()
                 + std::chrono::duration_cast<clock_type::duration>(
                   std::chrono::duration<double>(grace_s));
      // The keeper's own copy, in its group, stays blocked; the
      // namespace's init ignores it.
      ::kill(program.group, SIGTERM);
    }
  }
}

/// Ends the keeper by the signal `sig` (without a core dump of the
/// keeper).
int end_by_signal(int sig) {
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  return 128 + sig;
}

/// Ends the keeper as the program ended: the same exit status, or the same
/// signal.
int end_as(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return end_by_signal(WTERMSIG(status));
}

} // namespace

int keeper_main(int argc, char** argv) {
  // Only stdin, stdout and stderr go to the program: a descriptor of eat's
  // store, open for writing, let a CLI rewrite the run's log (red team).
  ::close_range(3, ~0U, 0);
  keeper_args args;
  if (!parse(argc, argv, args))
    return keeper_failed;
  auto signals = waited_signals();
  sigset_t before;
  ::sigprocmask(SIG_BLOCK, &signals, &before);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
  if (::getppid() != args.parent)
    return complain("eat (pid " + std::to_string(args.parent)
                    + ") is gone; not starting " + args.program[0]);
  if (!devices::adopt_orphans())
    complain(std::string{"cannot become a child subreaper ("}
             + std::strerror(errno) + "): daemons of " + args.program[0]
             + " may outlive it");
  set_ignored_signals(SIG_IGN);
  auto program = args.namespaces ? start_isolated(args, before)
                                 : start_in_group(args.program, before);
  if (program.pid < 0)
    return keeper_failed;
  let_go_of_stdio();
  int status = 0;
  bool ended = wait_for(program, args.grace_s, status);
  devices::end_children(); // the program too, when its grace ran out
  return ended ? end_as(status) : end_by_signal(SIGKILL);
}

} // namespace eat
