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
#include <unistd.h>

#include "actors/agent/cli_process.hpp"
#include "actors/protocol/error.hpp"
#include "tests/actors/agent/cli_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;

namespace {

using eat::test::fake_cli;

cli_run_spec spec_for(std::vector<std::string> argv,
                      const std::filesystem::path& cwd) {
  cli_run_spec spec;
  spec.argv = std::move(argv);
  spec.cwd = cwd;
  spec.env = allowed_environment({"PATH"});
  spec.timeout_s = 60;
  spec.idle_timeout_s = 60;
  spec.kill_grace_s = 5;
  spec.keeper = EAT_KEEPER_PATH; // as the cli agent runs them
  return spec;
}

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
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("hang.sh"), "stubborn"}, dir.path());
  spec.idle_timeout_s = 0.2;
  spec.kill_grace_s = 0.2;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::idle);
  CHECK(r->killed);
  CHECK(r->status.signal == SIGKILL);
}

TEST_CASE("cli process: a chatty child is stopped by the wall-clock timeout") {
  test::temp_dir dir;
  auto spec = spec_for({fake_cli("noisy.sh"), "ticks"}, dir.path());
  spec.timeout_s = 0.5;
  spec.idle_timeout_s = 30;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::timed_out);
  CHECK_THAT(r->output, Catch::StartsWith("tick\n"));
  CHECK(describe_end(*r, spec) == "timed out after 0.5 s");
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
  spec.idle_timeout_s = 0.3;
  spec.kill_grace_s = 0.2;
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->end == cli_end::idle);
  CHECK(r->killed);
  CHECK(r->status.signal == SIGKILL);
  CHECK(r->seconds < 5); // the keeper's grace, not the pump's margin
  CHECK(gone(pid_in(dir.path() / "cli.pid")));
  CHECK(gone(pid_in(dir.path() / "daemon.pid")));
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

TEST_CASE("cli process: the CLI cannot write the paths given read-only, "
          "but for those given writable") {
  // A CLI overwrote the run's cached baseline and reference objects: a
  // wrong kernel scored 16.5x and passed re-verification (red team).
  test::temp_dir dir;
  auto run = dir.path() / "run";
  std::filesystem::create_directories(run / "cache");
  std::filesystem::create_directories(run / "workspaces" / "mine");
  std::ofstream{run / "cache" / "baseline.so"} << "compiled\n";
  // Also around the mounts: through eat's /proc/PID/root, or undoing them
  // (the test runs as root); and eat's processes are not in its /proc.
  auto ours = "/proc/" + std::to_string(::getpid());
  auto around = ours + "/root" + (run / "cache" / "baseline.so").string();
  auto spec = spec_for(
    {"/bin/sh", "-c",
      "test -d " + ours
        + " && echo eat is visible; "
          "echo poisoned > "
        + around
        + "; echo poisoned > run/cache/baseline.so; "
          "rm -f run/cache/baseline.so; touch run/new; "
          "echo mine > run/workspaces/mine/kernel.cpp; touch outside; "
          "umount -l run; mount -o remount,rw run; touch run/last"},
    dir.path());
  spec.mounts = {{run.string(), false}, {(dir.path() / "missing").string()},
    {(run / "workspaces" / "mine").string(), true}};
  auto r = run_cli_process(spec);
  REQUIRE(r);
  INFO(r->errors);
  CHECK(describe_end(*r, spec) == "exited with status 1"); // touch run/last
  CHECK(r->output.empty());
  CHECK_THAT(r->errors, Catch::Contains("Read-only file system"));
  std::ifstream in{run / "cache" / "baseline.so"};
  std::string kept;
  std::getline(in, kept);
  CHECK(kept == "compiled");
  CHECK_FALSE(std::filesystem::exists(run / "new"));
  CHECK_FALSE(std::filesystem::exists(run / "last"));
  CHECK(std::filesystem::exists(run / "workspaces" / "mine" / "kernel.cpp"));
  CHECK(std::filesystem::exists(dir.path() / "outside"));
  // Without namespaces nothing is read-only (the control).
  spec.namespaces = false;
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK_FALSE(std::filesystem::exists(run / "cache" / "baseline.so"));
  CHECK(std::filesystem::exists(run / "new"));
  CHECK(std::filesystem::exists(run / "last"));
  CHECK(r->output == "eat is visible\n");
}

TEST_CASE("cli process: a CLI given / read-only cannot change the machine's "
          "files or kernel settings, but can write where it is given") {
  // A root CLI set kernel.core_pattern to a program of its own, which the
  // kernel ran as root outside every namespace (red team).
  test::temp_dir dir;
  auto etc_file = std::filesystem::path{"/etc/eat-keeper-test"};
  auto spec = spec_for(
    {"/bin/sh", "-c",
      "touch " + etc_file.string()
        + "; "
          "p=$(cat /proc/sys/kernel/core_pattern); "
          "echo \"$p\" > /proc/sys/kernel/core_pattern; touch given"},
    dir.path());
  spec.mounts = {{"/", false}, {dir.path().string(), true}};
  auto r = run_cli_process(spec);
  REQUIRE(r);
  INFO(r->errors);
  CHECK(describe_end(*r, spec) == "exited with status 0");
  CHECK_THAT(
    r->errors, Catch::Contains(etc_file.string() + "': Read-only file system"));
  CHECK_THAT(r->errors, Catch::Contains("core_pattern: Read-only file system"));
  CHECK(std::filesystem::exists(dir.path() / "given"));
  CHECK_FALSE(std::filesystem::exists(etc_file));
  std::filesystem::remove(etc_file);
}

TEST_CASE("cli process: a CLI sees none of a hidden folder but what it is "
          "given under it, and a /dev of its own") {
  // Another team's ./eval socket, in a read-only workspace, still took a
  // CLI's kernels as that team's; a root CLI opened the machine's disks
  // and consoles for writing (red team).
  test::temp_dir dir;
  auto spaces = dir.path() / "workspaces";
  std::filesystem::create_directories(spaces / "theirs");
  std::filesystem::create_directories(spaces / "mine");
  std::ofstream{spaces / "theirs" / "kernel.cpp"} << "theirs\n";
  auto spec = spec_for(
    {"/bin/sh", "-c",
      "ls workspaces; echo mine > workspaces/mine/kernel.cpp; ls /dev; "
      "echo x > /dev/null"},
    dir.path());
  spec.mounts = {{"/", false}, {spaces.string(), false, true},
    {(spaces / "mine").string(), true}};
  auto r = run_cli_process(spec);
  REQUIRE(r);
  INFO(r->errors);
  CHECK(describe_end(*r, spec) == "exited with status 0");
  CHECK(r->output
        == "mine\nfd\nfull\nnull\nptmx\npts\nrandom\nshm\nstderr\n"
           "stdin\nstdout\ntty\nurandom\nzero\n");
  CHECK(std::filesystem::exists(spaces / "mine" / "kernel.cpp"));
}

TEST_CASE("cli process: a folder mounted from another shows the other's "
          "files, and what the CLI writes there lands in the other") {
  // A team's own copy of ~/.claude in place of eat's (cli_home.hpp).
  test::temp_dir dir;
  auto home = dir.path() / "home" / ".claude";
  auto copy = dir.path() / "copy" / ".claude";
  std::filesystem::create_directories(home);
  std::filesystem::create_directories(copy);
  std::ofstream{home / "settings.json"} << "eat's\n";
  std::ofstream{copy / "settings.json"} << "the team's\n";
  auto spec = spec_for({"/bin/sh", "-c",
                         "cat home/.claude/settings.json; "
                         "echo planted > home/.claude/settings.json; "
                         "touch home/other 2>/dev/null || echo read-only"},
    dir.path());
  spec.mounts = {{"/", false}, {home.string(), true, false, copy.string()}};
  auto r = run_cli_process(spec);
  REQUIRE(r);
  INFO(r->errors);
  CHECK(describe_end(*r, spec) == "exited with status 0");
  CHECK(r->output == "the team's\nread-only\n");
  std::ifstream mine{home / "settings.json"};
  std::string text;
  std::getline(mine, text);
  CHECK(text == "eat's");
  std::ifstream theirs{copy / "settings.json"};
  std::getline(theirs, text);
  CHECK(text == "planted");
  // The keeper's --bind names two absolute paths.
  spec = spec_for({EAT_KEEPER_PATH, "--parent", "1", "--bind", "/tmp",
                    "relative", "--", "/bin/true"},
    dir.path());
  spec.keeper.clear();
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "exited with status 125");
  CHECK_THAT(r->errors, Catch::Contains("--bind: needs two absolute paths"));
}

TEST_CASE("cli process: in its namespaces a CLI cannot use the kernel's "
          "keyrings, and has System V IPC of its own") {
  // Keyrings and System V IPC have no mount or PID namespace: a red
  // team's CLI read and planted keys in eat's keyrings, and its shared
  // memory reached the other teams' CLIs and outlived the run.
  test::temp_dir dir;
  auto spec = spec_for(
    {"/bin/sh", "-c",
      std::string{EAT_FAKE_ADD_KEY} + "; readlink /proc/self/ns/ipc"},
    dir.path());
  spec.mounts = {{"/", false}};
  auto r = run_cli_process(spec);
  REQUIRE(r);
  INFO(r->errors);
  auto own_ipc = std::filesystem::read_symlink("/proc/self/ns/ipc").string();
  CHECK_THAT(
    r->output, Catch::StartsWith("add_key: Operation not permitted\n"));
  CHECK_THAT(r->output, Catch::Contains("ipc:["));
  CHECK_THAT(r->output, !Catch::Contains(own_ipc));
  // Without the namespaces (namespaces = false), as before.
  spec.namespaces = false;
  spec.mounts.clear();
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(r->output == "add_key: ok\n" + own_ipc + "\n");
}

TEST_CASE("cli process: a CLI runs in a session of its own, without eat's "
          "terminal") {
  // In eat's session it pushed commands into the operator's shell through
  // /dev/tty (TIOCSTI), as root outside every namespace (red team).
  test::temp_dir dir;
  auto spec = spec_for(
    {"/bin/sh", "-c",
      "read -r _ _ _ _ _ session _ < /proc/self/stat; echo $session"},
    dir.path());
  for (bool namespaces : {true, false}) {
    INFO(namespaces);
    spec.namespaces = namespaces;
    auto r = run_cli_process(spec);
    REQUIRE(r);
    CHECK(r->output != std::to_string(::getsid(0)) + "\n");
    CHECK(r->output != "0\n");
  }
}

TEST_CASE("cli process: a CLI's /tmp is its own, and a mount the machine has "
          "read-only under a writable path stays read-only") {
  // It could plant links in the machine's /tmp where other CLIs and later
  // runs write; clearing read-only recursively made the machine's
  // read-only mounts under /tmp writable (red team).
  test::temp_dir dir;
  auto tag = std::to_string(::getpid());
  auto host_file = "/tmp/eat-host-" + tag;
  auto cli_file = "/tmp/eat-cli-" + tag;
  std::ofstream{host_file} << "host\n";
  auto shared = dir.path() / "shared";
  std::filesystem::create_directories(shared / "ro");
  bool mounted = ::geteuid() == 0
                 && ::mount((shared / "ro").c_str(), (shared / "ro").c_str(),
                      nullptr, MS_BIND, nullptr)
                      == 0
                 && ::mount(nullptr, (shared / "ro").c_str(), nullptr,
                      MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr)
                      == 0;
  auto spec
    = spec_for({"/bin/sh", "-c",
                 "test -e " + host_file + " && echo host file seen; touch "
                   + cli_file + " shared/given shared/ro/written"},
      dir.path());
  spec.mounts = {{"/", false}, {"/tmp", true, true}, {shared.string(), true}};
  auto r = run_cli_process(spec);
  if (mounted)
    ::umount2((shared / "ro").c_str(), MNT_DETACH);
  std::filesystem::remove(host_file);
  REQUIRE(r);
  INFO(r->errors);
  CHECK(r->output.empty());
  CHECK_FALSE(std::filesystem::exists(cli_file));
  std::filesystem::remove(cli_file);
  CHECK(std::filesystem::exists(shared / "given"));
  if (mounted) {
    CHECK_THAT(
      r->errors, Catch::Contains("shared/ro/written': Read-only file system"));
    CHECK_FALSE(std::filesystem::exists(shared / "ro" / "written"));
  }
}

TEST_CASE("cli process: a CLI gets only stdin, stdout and stderr of eat's "
          "descriptors") {
  // It inherited the run's store, open for writing, and rewrote the log
  // through it (red team).
  test::temp_dir dir;
  int leaked = ::open("/dev/null", O_RDONLY); // not close-on-exec
  REQUIRE(leaked > 2);
  auto spec = spec_for({"/bin/ls", "/proc/self/fd"}, dir.path());
  auto r = run_cli_process(spec);
  ::close(leaked);
  REQUIRE(r);
  CHECK(r->output == "0\n1\n2\n3\n"); // 3: the folder ls reads
}

TEST_CASE("cli process: the keeper reports bad arguments and a program it "
          "cannot run") {
  test::temp_dir dir;
  auto spec = spec_for({"/nonexistent/cli"}, dir.path());
  auto r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "exited with status 127");
  CHECK_THAT(
    r->errors, Catch::Contains("eat-keeper: cannot run /nonexistent/cli"));
  spec = spec_for(
    {EAT_KEEPER_PATH, "--parent", "1", "--grace", "soon", "--", "/bin/true"},
    dir.path());
  spec.keeper.clear();
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "exited with status 125");
  CHECK_THAT(r->errors, Catch::Contains("--grace: not a number of seconds"));
  spec.argv = {
    EAT_KEEPER_PATH, "--parent", "1", "--read-only", "run", "--", "/bin/true"};
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK(describe_end(*r, spec) == "exited with status 125");
  CHECK_THAT(
    r->errors, Catch::Contains("--read-only: not an absolute path: run"));
  spec.argv = {EAT_KEEPER_PATH, "--parent", "1", "--", "/bin/true"};
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK_THAT(r->errors, Catch::Contains("eat (pid 1) is gone"));
}
