// Specification of the cli agent's process control (cli_process.hpp): argv
// without a shell, stdin, the environment allow-list, bounded output, the
// idle and wall-clock timeouts, SIGTERM then SIGKILL to the group, and
// eat-keeper (keeper.hpp), under which eat runs every CLI: nothing the CLI
// starts outlives it, daemons included.

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/agent/cli_process.hpp"
#include "actors/protocol/error.hpp"
#include "tests/actors/agent/cli_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;

namespace {

using eat::test::fake_cli;
using eat::test::spec_for;

/// The pid written to `file` by tests/actors/agent/fakes/daemon.sh.
pid_t pid_in(const std::filesystem::path& file) {
  std::ifstream in{file};
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

/// Whether process `pid` has ended, waiting for at most `seconds` (it need
/// not be our child: a pidfd becomes readable when it exits).
bool ended_within(pid_t pid, int seconds) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0)
    return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  bool ended = ::poll(&p, 1, seconds * 1000) == 1;
  ::close(fd);
  return ended;
}

/// Whether process `pid` is gone now (no waiting: zombies count as alive
/// until reaped, and the keeper reaps before it exits).
bool gone(pid_t pid) {
  return ::kill(pid, 0) == -1 && errno == ESRCH;
}

/// Runs `spec` (daemon.sh) and checks that its daemon is still running
/// after it, then kills the daemon.
void check_daemon_outlives(const cli_run_spec& spec) {
  auto r = run_cli_process(spec);
  REQUIRE(r);
  auto daemon = pid_in(spec.cwd / "daemon.pid");
  REQUIRE(daemon > 0);
  CHECK_FALSE(gone(daemon));
  ::kill(daemon, SIGKILL);
  CHECK(ended_within(daemon, 30));
}

} // namespace

TEST_CASE("cli process: find_program searches PATH and reports what is missing") {
  auto sh = find_program("sh", "/nonexistent:/bin:/usr/bin");
  REQUIRE(sh);
  CHECK(sh->filename() == "sh");
  auto missing = find_program("eat-no-such-program", "/bin:/usr/bin");
  REQUIRE_FALSE(missing);
  CHECK_THAT(render(missing.error()),
             Catch::Contains("program 'eat-no-such-program' not found in PATH"));
  CHECK_FALSE(find_program("/nonexistent/prog", ""));
}

TEST_CASE("cli process: the child gets stdin, cwd and only allowed variables") {
  test::temp_dir dir;
  setenv("EAT_TEST_VISIBLE", "yes", 1);
  setenv("EAT_TEST_SECRET", "hidden", 1);
  auto spec = spec_for({"/bin/sh", "-c",
                        "cat > got.txt; pwd; env | sort | grep EAT_TEST_"},
                       dir.path());
  spec.env = allowed_environment({"PATH", "EAT_TEST_VISIBLE", "EAT_UNSET_X"});
  spec.stdin_data = "the prompt\n";
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::exited);
  CHECK(r->status.exited);
  CHECK(r->status.code == 0);
  CHECK_THAT(r->output, Catch::Contains("EAT_TEST_VISIBLE=yes"));
  CHECK_THAT(r->output, !Catch::Contains("EAT_TEST_SECRET"));
  CHECK_THAT(r->output, Catch::Contains(dir.path().filename().string()));
  std::ifstream got{dir.path() / "got.txt"};
  std::string line;
  std::getline(got, line);
  CHECK(line == "the prompt");
}

TEST_CASE("cli process: arguments are never interpreted by a shell") {
  test::temp_dir dir;
  auto r = run_cli_process(
    spec_for({"/bin/echo", "$(touch pwned)", "a;b", "{x}"}, dir.path()));
  REQUIRE(r);
  CHECK(r->output == "$(touch pwned) a;b {x}\n");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "pwned"));
}

TEST_CASE("cli process: output keeps the last max_output bytes") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("noisy.sh"), "bulk", "3000000"}, dir.path());
  spec.max_output = 1 << 20;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->output.size() == size_t{1} << 20);
  CHECK(r->dropped == 3000000 - (size_t{1} << 20));
  CHECK(r->output.find_first_not_of('a') == std::string::npos);
}

TEST_CASE("cli process: a silent child is stopped by the idle timeout") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("hang.sh")}, dir.path());
  spec.idle_timeout_s = 0.2;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::idle);
  CHECK_FALSE(r->killed);
  CHECK_FALSE(r->status.exited);
  CHECK(r->status.signal == SIGTERM);
  CHECK(describe_end(*r, spec) == "idle: no output for 0.2 s");
}

TEST_CASE("cli process: a child that ignores SIGTERM gets SIGKILL after the grace period") {
  // Stopped once hang.sh says its trap is set: an idle timeout, which runs
  // from the start, once sent SIGTERM before it on a loaded machine.
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("hang.sh"), "stubborn"}, dir.path());
  spec.kill_grace_s = 0.2;
  spec.on_line = [](std::string_view line) {
    return line != "ignoring TERM";
  };
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->output == "ignoring TERM\n");
  CHECK(r->end == cli_end::stopped);
  CHECK(r->killed);
  CHECK(r->status.signal == SIGKILL);
}

TEST_CASE("cli process: a stop the keeper gets as it starts reaches the CLI "
          "at once, not after the grace period") {
  // The keeper starts with SIGTERM pending (kept across exec), so it asks
  // the CLI's group to stop before the namespace's init may have made
  // that group: the stop was lost (ESRCH), and the CLI ran on until the
  // keeper's grace period was over and it was killed. The CLI (perl,
  // which Debian always has) unblocks SIGTERM, blocked for it as for the
  // keeper, and dies of the one sent to it.
  std::vector<std::string> args{EAT_KEEPER_PATH, "--parent",
    std::to_string(::getpid()), "--grace", "20", "--", "/usr/bin/perl",
    "-MPOSIX", "-e",
    "sigprocmask(SIG_UNBLOCK, POSIX::SigSet->new(SIGTERM)); sleep 600"};
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t keeper = ::fork();
  REQUIRE(keeper >= 0);
  if (keeper == 0) {
    ::setpgid(0, 0); // as eat starts it: a stop without namespaces goes here
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &term, nullptr);
    ::kill(::getpid(), SIGTERM);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  REQUIRE(::waitpid(keeper, &status, 0) == keeper);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM); // SIGKILL: the grace period ran out
}

TEST_CASE("cli process: a chatty child is stopped by the wall-clock timeout") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("noisy.sh"), "ticks"}, dir.path());
  // Long enough for a shell on a loaded machine to start and print.
  spec.timeout_s = 2;
  spec.idle_timeout_s = 30;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::timed_out);
  CHECK_THAT(r->output, Catch::StartsWith("tick\n"));
  CHECK(describe_end(*r, spec) == "timed out after 2 s");
}

TEST_CASE("cli process: the line callback sees each line and can stop the child") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("noisy.sh"), "ticks"}, dir.path());
  int lines = 0;
  spec.on_line = [&](std::string_view line) {
    CHECK(line == "tick");
    return ++lines < 3;
  };
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::stopped);
  CHECK(lines == 3);
}

TEST_CASE("cli process: crashes are reported with their status or signal") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("crash.sh"), "exit3"}, dir.path());
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "exited with status 3");
  CHECK_THAT(r->errors, Catch::Contains("something broke"));
  spec.argv = {fake_cli("crash.sh"), "segv"};
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "killed by SIGSEGV");
}

TEST_CASE("cli process: a child is stopped once the run halts") {
  // Ctrl-C and max_wall_s waited for a running agent up to its timeout.
  test::temp_dir dir;
  std::atomic<bool> halt{false};
  auto spec
    = spec_for({"/bin/sh", "-c", "echo started; exec sleep 600"}, dir.path());
  spec.timeout_s = 600;
  spec.idle_timeout_s = 600;
  spec.halt = &halt;
  spec.on_line = [&](std::string_view) {
    halt = true; // as the supervisor does when the run stops
    return true;
  };
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::halted);
  CHECK(r->seconds < 60);
  CHECK(describe_end(*r, spec) == "stopped: the run is ending");
}

TEST_CASE("cli process: a program that cannot start is an error") {
  test::temp_dir dir;
  auto spec = spec_for({"/nonexistent/cli"}, dir.path());
  spec.keeper.clear();
  auto r = run_cli_process(spec);
  REQUIRE_FALSE(r);
  CHECK_THAT(render(r.error()), Catch::Contains("/nonexistent/cli"));
  spec.keeper = "/nonexistent/eat-keeper";
  r = run_cli_process(spec);
  REQUIRE_FALSE(r);
  CHECK_THAT(
    render(r.error()), Catch::Contains("cannot start /nonexistent/eat-keeper"));
}

TEST_CASE(
  "cli process: a daemon the CLI started is killed when the CLI exits") {
  test::temp_dir dir;
  auto r
    = run_cli_process(spec_for({fake_cli("daemon.sh"), "exit"}, dir.path()));
  REQUIRE(r);
  CHECK(r->output == "daemon started\n");
  CHECK(describe_end(*r, spec_for({}, dir.path())) == "exited with status 0");
  auto daemon = pid_in(dir.path() / "daemon.pid");
  REQUIRE(daemon > 0);
  CHECK(gone(daemon));
}

TEST_CASE("cli process: a CLI that stops, signals or kills its keeper still "
          "ends cleanly, and its daemon with it") {
  // A stopped keeper reaped nothing: the attempt ended by the idle timeout
  // and the daemon survived; SIGUSR1 killed the keeper; so did SIGKILL to
  // the CLI's group, or to the keeper's pid read from /proc, and the
  // daemon ran on. In its PID namespace the CLI cannot reach the keeper.
  test::temp_dir dir;
  auto mode = GENERATE(std::string{"stop-keeper"}, std::string{"usr1-keeper"},
    std::string{"kill-group"}, std::string{"kill-keeper"});
  INFO(mode);
  auto spec = spec_for({fake_cli("daemon.sh"), mode}, dir.path());
  spec.idle_timeout_s = 30;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::exited);
  CHECK(
    describe_end(*r, spec)
    == (mode == "kill-group" ? "killed by SIGKILL" : "exited with status 0"));
  CHECK(gone(pid_in(dir.path() / "daemon.pid")));
}

TEST_CASE("cli process: without its PID namespace, a CLI that kills its "
          "group kills the keeper, and its daemon outlives it") {
  // Why the keeper runs the CLI in a namespace of its own.
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("daemon.sh"), "kill-group"}, dir.path());
  spec.namespaces = false;
  check_daemon_outlives(spec);
}

TEST_CASE("cli process: the CLI runs in a PID namespace of its own, and "
          "with --no-namespaces in eat's") {
  test::temp_dir dir;
  auto spec = spec_for(
    {"/bin/sh", "-c", "echo $$; readlink /proc/self/ns/pid"}, dir.path());
  auto r = run_cli_process(spec);
  REQUIRE(r);
  auto ours = std::filesystem::read_symlink("/proc/self/ns/pid").string();
  CHECK_THAT(r->output, Catch::StartsWith("2\npid:["));
  CHECK_THAT(r->output, !Catch::EndsWith(ours + "\n"));
  spec.namespaces = false;
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK_THAT(r->output, Catch::EndsWith("\n" + ours + "\n"));
}

TEST_CASE("cli process: where the kernel refuses namespaces, the keeper "
          "says so, runs the CLI in eat's, and still kills its daemon") {
  // As where user namespaces are disabled or restricted by AppArmor: the
  // fake makes unshare fail for the keeper it runs.
  test::temp_dir dir;
  auto under_refusing_kernel = [&](std::vector<std::string> program) {
    std::vector<std::string> argv{EAT_FAKE_NO_NAMESPACES, EAT_KEEPER_PATH,
      "--parent", std::to_string(::getpid()), "--grace", "5", "--read-only",
      "/", "--writable", dir.path().string(), "--"};
    argv.insert(argv.end(), program.begin(), program.end());
    auto spec = spec_for(argv, dir.path());
    spec.keeper.clear(); // in argv, under the fake
    return run_cli_process(spec);
  };
  auto r = under_refusing_kernel({fake_cli("daemon.sh"), "exit"});
  REQUIRE(r);
  CHECK(r->output == "daemon started\n");
  CHECK_THAT(r->errors,
    Catch::Contains("runs in eat's PID and mount namespaces, and can write "
                    "the run's files"));
  CHECK(describe_end(*r, spec_for({}, dir.path())) == "exited with status 0");
  auto daemon = pid_in(dir.path() / "daemon.pid");
  REQUIRE(daemon > 0);
  CHECK(gone(daemon)); // killed and reaped before the keeper exits
  r = under_refusing_kernel({"/bin/readlink", "/proc/self/ns/pid"});
  REQUIRE(r);
  CHECK(r->output
        == std::filesystem::read_symlink("/proc/self/ns/pid").string() + "\n");
}

TEST_CASE("cli process: without the keeper, a daemon that left the group "
          "outlives the CLI") {
  // Why the keeper exists: the group kill cannot reach it.
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("daemon.sh"), "exit"}, dir.path());
  spec.keeper.clear();
  check_daemon_outlives(spec);
}

TEST_CASE("cli process: a stubborn CLI and its daemon are killed after the "
          "grace period") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("daemon.sh"), "stubborn"}, dir.path());
  spec.kill_grace_s = 0.2;
  // Stopped once both pids are written and the trap is set.
  spec.on_line = [](std::string_view line) {
    return line != "daemon started";
  };
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::stopped);
  CHECK(r->killed);
  CHECK(r->status.signal == SIGKILL);
  CHECK(r->seconds < 5); // the keeper's grace, not the pump's margin
  auto cli = pid_in(dir.path() / "cli.pid");
  auto daemon = pid_in(dir.path() / "daemon.pid");
  REQUIRE(cli > 0);
  REQUIRE(daemon > 0);
  CHECK(gone(cli));
  CHECK(gone(daemon));
}

TEST_CASE("cli process: a CLI and its daemon die when the run halts") {
  test::temp_dir dir;
  std::atomic<bool> halt{false};
  auto spec = spec_for({fake_cli("daemon.sh"), "hang"}, dir.path());
  spec.halt = &halt;
  spec.on_line = [&](std::string_view) {
    halt = true;
    return true;
  };
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::halted);
  CHECK_FALSE(r->killed);
  CHECK(r->status.signal == SIGTERM);
  CHECK(gone(pid_in(dir.path() / "cli.pid")));
  CHECK(gone(pid_in(dir.path() / "daemon.pid")));
}

TEST_CASE("cli process: when the process that started the keeper dies, the "
          "CLI and its daemon die too") {
  // As when eat is killed: a shell stands in for it, starts the keeper
  // (outside its own group, so that only the keeper's parent-death signal
  // can stop it), waits for the daemon and exits.
  test::temp_dir dir;
  auto spec = spec_for(
    {"/bin/sh", "-c",
      "mkfifo out; setsid \"$0\" --parent $$ --grace 1 -- \"$1\" hang "
      "> out & read -r line < out; echo \"$line\"",
      EAT_KEEPER_PATH, fake_cli("daemon.sh")},
    dir.path());
  spec.keeper.clear();
  auto r = run_cli_process(spec);
  REQUIRE(r);
  REQUIRE(r->output == "daemon started\n");
  CHECK(ended_within(pid_in(dir.path() / "cli.pid"), 30));
  CHECK(ended_within(pid_in(dir.path() / "daemon.pid"), 30));
}
