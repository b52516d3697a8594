// Specification of what a CLI may reach under eat-keeper (keeper.hpp): the
// paths given read-only, hidden folders, mounts from elsewhere, the
// kernel's keyrings and System V IPC, its cores, eat's session and
// terminal, /tmp and eat's open descriptors; and how the keeper reports bad
// arguments.

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "actors/agent/cli_process.hpp"
#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"
#include "tests/actors/agent/cli_fixtures.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

using namespace eat;
using eat::test::spec_for;

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

TEST_CASE("cli process: a hidden file reads empty, and what is written to "
          "it goes nowhere") {
  // The operator's keys (~/.ssh/id_*) were readable by a root CLI (red
  // team): eat hides them, files as folders.
  test::temp_dir dir;
  auto key = dir.path() / "id_ed25519";
  std::ofstream{key} << "secret\n";
  auto spec = spec_for(
    {"/bin/sh", "-c", "cat id_ed25519; echo x > id_ed25519; cat id_ed25519"},
    dir.path());
  spec.mounts = {{"/", false}, {key.string(), false, true}};
  auto r = run_cli_process(spec);
  REQUIRE(r);
  INFO(r->errors);
  CHECK(describe_end(*r, spec) == "exited with status 0");
  CHECK(r->output.empty());
  CHECK(test::read_text(key) == "secret\n");
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

TEST_CASE("cli process: in its namespaces a CLI keeps the cores it was "
          "started on") {
  // eat keeps itself, and so the CLIs it starts, off the cores that time
  // kernels; a red team's CLI moved a load onto the device's core, which
  // slowed the baseline's long calls more than a fast candidate's.
  auto core = devices::thread_cores().front();
  devices::pinned_thread pinned{{core}};
  REQUIRE(pinned.error().empty());
  test::temp_dir dir;
  auto spec = spec_for({"/bin/sh", "-c",
                         "taskset -cp $$; taskset -c " + std::to_string(core)
                           + " true && echo moved || echo stayed"},
    dir.path());
  spec.mounts = {{"/", false}};
  auto r = run_cli_process(spec);
  REQUIRE(r);
  INFO(r->errors);
  auto started = "current affinity list: " + std::to_string(core) + "\n";
  CHECK_THAT(r->output, Catch::Contains(started));
  CHECK_THAT(r->output, Catch::EndsWith("stayed\n"));
  CHECK_THAT(r->errors, Catch::Contains("Operation not permitted"));
  // Without the namespaces (namespaces = false), as before.
  spec.namespaces = false;
  spec.mounts.clear();
  r = run_cli_process(spec);
  REQUIRE(r);
  CHECK_THAT(r->output, Catch::Contains(started));
  CHECK_THAT(r->output, Catch::EndsWith("moved\n"));
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
