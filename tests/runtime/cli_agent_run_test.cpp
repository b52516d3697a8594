// Specification of a run whose agent is a coding-agent CLI, end to end with
// the real eat program: the [agents.cli] settings reach the agent, and what
// its ./eval did shows in the log and in `eat status`.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/wait.h>

#include "actors/agent/run_registry.hpp"
#include "actors/protocol/event.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/event_log.hpp"
#include "persistence/store.hpp"
#include "tests/runtime/process.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace eat;

namespace {

std::string read_text(const fs::path& file) {
  std::ifstream in{file};
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

uint64_t count_events(const fs::path& run_dir, event_kind kind) {
  persistence::store_options opts;
  opts.read_only = true;
  auto store = persistence::store::open(run_dir / "store", opts);
  REQUIRE(store);
  auto events = persistence::event_log{**store}.read(1);
  REQUIRE(events);
  uint64_t n = 0;
  for (const auto& e : *events)
    n += e.kind == kind ? 1 : 0;
  return n;
}

/// Writes a configuration under `root` for a run of `evaluations` on
/// sgemm by `teams` teams of one cli agent, the script `agent` (made
/// executable), with `cli` added to [agents.cli]; runs it with eat into
/// `run_dir` (by default root/run), which it returns once eat exited with
/// status 0, with what eat printed in `printed` where given.
fs::path run_cli_agent(const fs::path& root, const fs::path& agent,
  int evaluations, int teams, const std::string& cli = {},
  std::string* printed = nullptr, fs::path run_dir = {}) {
  fs::permissions(agent, fs::perms::owner_all);
  auto config = root / "config.toml";
  std::ofstream{config}
    << "[run]\ntask = \"sgemm\"\ntasks_dir = \"" << EAT_SOURCE_DIR
    << "/kernels\"\nroot = \"" << root.string()
    << "\"\nmax_evaluations = " << evaluations << "\n"
    << "[timing]\nwarmup = 1\nmin_samples = 3\nmin_time_s = 0.01\n"
    << "max_time_s = 0.2\ncheck_seeds = 2\n"
    << "[supervisor]\nteams = " << teams << "\nagents_per_team = 1\n"
    << "[agents]\nbackend = \"cli\"\n[agents.cli]\npreset = \"custom\"\n"
    << "program = \"" << agent.string() << "\"\nargs = [\"{workspace}\"]\n"
    << "output_format = \"plain\"\nprompt_input = \"none\"\nretries = 0\n"
    << cli;
  if (run_dir.empty())
    run_dir = root / "run";
  test::child_process run{
    EAT_BINARY, {"run", config.string(), "--run-dir", run_dir.string()}};
  std::string out;
  auto status = run.finish(out);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  if (printed != nullptr)
    *printed = out;
  return run_dir;
}

} // namespace

TEST_CASE("a cli agent's ./eval stops at [agents.cli] max_evals per "
          "assignment, its CLI runs in a PID namespace of its own and cannot "
          "write the run's files, and eat status counts what its team "
          "tried") {
  test::temp_dir tmp;
  auto agent = tmp.path() / "agent.sh";
  std::ofstream{agent} << "#!/bin/sh\n"
                       << "echo \"// attempt $$\" >> kernel.cpp\n"
                       << "readlink /proc/self/ns/pid > scratch/ns.txt\n"
                       << "./eval > scratch/eval1.txt 2>&1\n"
                       << "./eval > scratch/eval2.txt 2>&1\n"
                       // What the red team did to score a wrong kernel.
                       << "for f in ../../work/cache/*.so; do "
                       << "cp kernel.cpp \"$f\"; done 2> scratch/cache.txt\n"
                       << "touch /etc/eat-run-test 2> scratch/etc.txt\n"
                       << "touch \"$HOME/eat-run-test\" 2> scratch/home.txt\n"
                       << "ls .. > scratch/workspaces.txt\n"
                       << "ls -A /run > scratch/run.txt\n"
                       << "echo \"$XDG_CACHE_HOME\" > scratch/cache-home.txt\n"
                       << "mkdir -p \"$XDG_CACHE_HOME/pip\" && "
                       << "echo made >> scratch/cache-home.txt\n"
                       << "echo done\n";
  auto run_dir = run_cli_agent(tmp.path(), agent, 1, 1, "max_evals = 1\n");
  uint64_t attempts = 0;
  for (const auto& w : fs::directory_iterator{run_dir / "workspaces"}) {
    auto first = w.path() / "scratch" / "eval1.txt";
    if (!fs::exists(first))
      continue;
    attempts += 1;
    INFO(w.path().filename().string());
    CHECK_THAT(read_text(first), Catch::StartsWith("status: passed\n"));
    CHECK_THAT(read_text(w.path() / "scratch" / "cache.txt"),
      Catch::Contains(".so': Read-only file system"));
    CHECK_THAT(read_text(w.path() / "scratch" / "etc.txt"),
      Catch::Contains("Read-only file system"));
    CHECK_THAT(read_text(w.path() / "scratch" / "home.txt"),
      Catch::Contains("Read-only file system"));
    // Its home is read-only: caches go to its own /tmp.
    CHECK(read_text(w.path() / "scratch" / "cache-home.txt")
          == "/tmp/.cache\nmade\n");
    CHECK(read_text(w.path() / "scratch" / "workspaces.txt")
          == w.path().filename().string() + "\n");
    // An empty /run of its own: no service's socket (systemd, D-Bus,
    // Docker) to have a program run outside its namespaces with. Here
    // /etc/resolv.conf does not lie under /run.
    if (!fs::path{fs::canonical("/etc/resolv.conf")}.string().starts_with(
          "/run/"))
      CHECK(read_text(w.path() / "scratch" / "run.txt").empty());
    auto ns = read_text(w.path() / "scratch" / "ns.txt");
    CHECK_THAT(ns, Catch::StartsWith("pid:["));
    CHECK(ns != fs::read_symlink("/proc/self/ns/pid").string() + "\n");
    CHECK_THAT(read_text(w.path() / "scratch" / "eval2.txt"),
      Catch::Contains("this assignment's 1 evaluations are spent "
                      "(agents.cli.max_evals)"));
  }
  REQUIRE(attempts >= 1);
  CHECK_FALSE(fs::exists("/etc/eat-run-test"));
  fs::remove("/etc/eat-run-test");
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    CHECK_FALSE(fs::exists(fs::path{home} / "eat-run-test"));
    fs::remove(fs::path{home} / "eat-run-test");
  }
  CHECK(count_events(run_dir, event_kind::agent_evaluated) == attempts);
  test::child_process show{EAT_BINARY, {"status", run_dir.string()}};
  std::string shown;
  CHECK(WEXITSTATUS(show.finish(shown)) == 0);
  CHECK_THAT(shown, Catch::Contains("evaluations: 1 of 1, 1 passed\n"));
  CHECK_THAT(shown,
    Catch::Contains(", " + std::to_string(attempts) + " tried with ./eval\n"));
}

TEST_CASE("a CLI runs off the core that times kernels and cannot move onto "
          "it") {
  // A red team's CLI loaded the device's core while another team's
  // candidate was timed: the baseline's long calls slowed more than the
  // candidate's short ones, and the same code was reported 1.3x faster.
  auto cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores < 2) {
    WARN("one core: the device's core is the only one");
    return;
  }
  // [devices.cpu] cores = []: the device times on the last core.
  auto device = std::to_string(cores - 1);
  test::temp_dir tmp;
  auto agent = tmp.path() / "agent.sh";
  std::ofstream{agent} << "#!/bin/sh\n"
                       << "echo \"// attempt $$\" >> kernel.cpp\n"
                       << "taskset -cp $$ > scratch/cores.txt\n"
                       << "taskset -c " << device
                       << " true 2> scratch/move.txt\n";
  auto run_dir = run_cli_agent(tmp.path(), agent, 1, 1);
  uint64_t attempts = 0;
  for (const auto& w : fs::directory_iterator{run_dir / "workspaces"}) {
    auto listed = w.path() / "scratch" / "cores.txt";
    if (!fs::exists(listed))
      continue;
    attempts += 1;
    // "pid 12's current affinity list: 0" (ranges "0-2", lists "0,2").
    auto text = read_text(listed);
    INFO(text);
    auto colon = text.rfind(": ");
    REQUIRE(colon != std::string::npos);
    std::stringstream list{text.substr(colon + 2)};
    for (std::string part; std::getline(list, part, ',');) {
      auto dash = part.find('-');
      auto low = std::stoi(part.substr(0, dash));
      auto high
        = dash == std::string::npos ? low : std::stoi(part.substr(dash + 1));
      CHECK((cores - 1 < low || cores - 1 > high));
    }
    CHECK_THAT(read_text(w.path() / "scratch" / "move.txt"),
      Catch::Contains("Operation not permitted"));
  }
  CHECK(attempts >= 1);
}

TEST_CASE("each team's CLI writes a home of its team's own: what it plants "
          "in ~/.claude stays there, and a login it refreshes comes back to "
          "eat's home") {
  test::temp_dir tmp;
  // Not under the run root, which CLIs do not see.
  test::temp_dir home_dir;
  auto home = home_dir.path() / "home";
  fs::create_directories(home / ".claude");
  std::ofstream{home / ".claude" / "settings.json"} << "{}\n";
  std::ofstream{home / ".claude" / ".credentials.json"} << "token-0\n";
  test::scoped_env home_env{"HOME", home.string()};
  auto agent = tmp.path() / "agent.sh";
  std::ofstream{agent}
    << "#!/bin/sh\n"
    << "cat \"$HOME/.claude/settings.json\" > scratch/before.txt\n"
    << "echo '{\"hooks\": \"planted\"}' > \"$HOME/.claude/settings.json\"\n"
    << "echo \"token-$$\" > \"$HOME/.claude/.credentials.json\"\n"
    << "echo \"// attempt $$\" >> kernel.cpp\n"
    << "echo done\n";
  auto run_dir = run_cli_agent(tmp.path(), agent, 2, 2);
  CHECK(read_text(home / ".claude" / "settings.json") == "{}\n");
  CHECK_THAT(read_text(home / ".claude" / ".credentials.json"),
    Catch::StartsWith("token-") && !Catch::Equals("token-0\n"));
  size_t teams = 0;
  for (const auto& t :
    fs::directory_iterator{run_dir / "workspaces" / ".homes"}) {
    if (t.path().extension() == ".given") // what eat gave each team
      continue;
    teams += 1;
    INFO(t.path().filename().string());
    CHECK(read_text(t.path() / ".claude" / "settings.json")
          == "{\"hooks\": \"planted\"}\n");
  }
  CHECK(teams == 2);
  uint64_t attempts = 0;
  for (const auto& w : fs::directory_iterator{run_dir / "workspaces"}) {
    if (!fs::exists(w.path() / "scratch" / "before.txt"))
      continue;
    attempts += 1;
    INFO(w.path().filename().string());
    // A team's first attempt finds eat's settings; a later one, what its
    // own team planted.
    CHECK_THAT(read_text(w.path() / "scratch" / "before.txt"),
      Catch::Equals("{}\n") || Catch::Equals("{\"hooks\": \"planted\"}\n"));
  }
  CHECK(attempts >= 2);
}

TEST_CASE("a CLI sees no other run under the run root, only its own") {
  // A red team's CLI read other runs' team homes there, and had its
  // kernels evaluated through a live run's ./eval socket.
  test::temp_dir tmp;
  fs::create_directories(tmp.path() / "older-run");
  std::ofstream{tmp.path() / "older-run" / "secret.txt"} << "secret\n";
  test::temp_dir elsewhere; // the CLI's program is not under the root
  auto agent = elsewhere.path() / "agent.sh";
  std::ofstream{agent}
    << "#!/bin/sh\n"
    << "ls ../../.. > scratch/root.txt\n"
    << "cat ../../../older-run/secret.txt > scratch/older.txt 2>&1\n"
    << "echo \"// attempt $$\" >> kernel.cpp\n"
    << "echo done\n";
  auto run_dir = run_cli_agent(tmp.path(), agent, 1, 1);
  uint64_t attempts = 0;
  for (const auto& w : fs::directory_iterator{run_dir / "workspaces"}) {
    if (!fs::exists(w.path() / "scratch" / "root.txt"))
      continue;
    attempts += 1;
    CHECK(read_text(w.path() / "scratch" / "root.txt") == "run\n");
    CHECK_THAT(read_text(w.path() / "scratch" / "older.txt"),
      Catch::Contains("No such file or directory"));
  }
  CHECK(attempts >= 1);
}

TEST_CASE("a CLI sees no run of eat's user made outside its run root "
          "(--run-dir), while other folders there stay readable") {
  // Only the run root was hidden: a run made elsewhere lay open to every
  // other run's CLIs. Each run enters its folder in the registry in the
  // home of eat's user (actors/agent/run_registry.hpp).
  auto registry = run_registry_dir();
  REQUIRE(registry);
  test::temp_dir scripts; // the CLIs' programs, in no run
  auto quiet = scripts.path() / "quiet.sh";
  std::ofstream{quiet} << "#!/bin/sh\necho \"// attempt $$\" >> kernel.cpp\n"
                       << "echo done\n";
  // Not in /tmp, which is each CLI's own: in the build tree, which CLIs
  // see read-only (eat's programs are there). Its workspaces lie outside
  // it, where an absolute work_dir puts them.
  test::temp_dir elsewhere{fs::current_path()};
  auto workspaces = elsewhere.path() / "workspaces";
  auto older = run_cli_agent(elsewhere.path(), quiet, 1, 1,
    "work_dir = \"" + workspaces.string() + "\"\n");
  auto listed = registered_runs(*registry);
  CHECK(std::find(listed.begin(), listed.end(), older) != listed.end());
  CHECK(std::find(listed.begin(), listed.end(), workspaces) != listed.end());
  REQUIRE_FALSE(fs::is_empty(workspaces));
  fs::create_directories(elsewhere.path() / "not-a-run");
  std::ofstream{elsewhere.path() / "not-a-run" / "notes.txt"} << "notes\n";
  auto agent = scripts.path() / "agent.sh";
  std::ofstream{agent}
    << "#!/bin/sh\n"
    << "ls -A " << older.string() << " > scratch/older.txt\n"
    << "cat " << (older / "config.toml").string()
    << " > scratch/config.txt 2>&1\n"
    << "ls -A " << workspaces.string() << " > scratch/workspaces.txt\n"
    << "cat " << (elsewhere.path() / "not-a-run" / "notes.txt").string()
    << " > scratch/notes.txt 2>&1\n"
    << "echo \"// attempt $$\" >> kernel.cpp\n"
    << "echo done\n";
  // A run elsewhere, outside its run root too (--run-dir: its own folder
  // is in the registry, and was hidden from its own CLIs), and one inside
  // the older run (an outer run that held the CLI's own lay open).
  test::temp_dir tmp{fs::current_path()}; // not in /tmp, which CLIs lack
  for (const auto& root : {tmp.path(), older / "nested"}) {
    INFO(root.string());
    fs::create_directories(root / "root");
    auto run_dir = root == tmp.path() ? run_cli_agent(root / "root", agent, 1,
                     1, {}, nullptr, root / "elsewhere")
                                      : run_cli_agent(root, agent, 1, 1);
    uint64_t attempts = 0;
    for (const auto& w : fs::directory_iterator{run_dir / "workspaces"}) {
      if (!fs::exists(w.path() / "scratch" / "older.txt"))
        continue;
      attempts += 1;
      // Inside, the folder that leads to its own run shows.
      CHECK(read_text(w.path() / "scratch" / "older.txt")
            == (root == tmp.path() ? "" : "nested\n"));
      CHECK_THAT(read_text(w.path() / "scratch" / "config.txt"),
        Catch::Contains("No such file or directory"));
      CHECK(read_text(w.path() / "scratch" / "workspaces.txt").empty());
      CHECK(read_text(w.path() / "scratch" / "notes.txt") == "notes\n");
    }
    CHECK(attempts >= 1);
  }
}

TEST_CASE("what a CLI writes reaches eat run's terminal only as text: its "
          "control characters show as escapes") {
  // A kernel's compile error and a file's name set the window title,
  // cleared the screen and printed a fake result line (red team).
  test::temp_dir scripts;
  auto kernel = scripts.path() / "kernel.sh";
  std::ofstream{kernel}
    << "#!/bin/sh\n"
    << "printf '#error \\033]0;TITLE\\007\\033[2J\\033[31mFAKE 99x\\n' "
    << "> kernel.cpp\necho done\n";
  auto file = scripts.path() / "file.sh";
  std::ofstream{file} << "#!/bin/sh\n"
                      << "touch \"$(printf 'x\\033[2Jy')\"\necho done\n";
  for (const auto& [agent, shown] :
    {std::pair{kernel, "\\x1b]0;TITLE\\x07\\x1b[2J\\x1b[31mFAKE 99x"},
      std::pair{file, "the agent added x\\x1b[2Jy"}}) {
    test::temp_dir tmp;
    std::string printed;
    run_cli_agent(tmp.path(), agent, 1, 1, {}, &printed);
    INFO(printed);
    CHECK_THAT(printed, Catch::Contains(shown));
    CHECK(printed.find('\x1b') == std::string::npos);
    CHECK(printed.find('\x07') == std::string::npos);
  }
}

TEST_CASE("a CLI sees neither the operator's keys nor other tools' logins "
          "in eat's home, and reads the rest of it") {
  // A red team's CLI read ~/.ssh/id_ed25519 and an API key in
  // ~/.aider.conf.yml. Not in /tmp, which CLIs lack.
  test::temp_dir home_dir{fs::current_path()};
  auto home = home_dir.path() / "home";
  fs::create_directories(home / ".ssh");
  std::ofstream{home / ".ssh" / "id_ed25519"} << "private key\n";
  std::ofstream{home / ".netrc"} << "machine x password p\n";
  std::ofstream{home / "notes.txt"} << "notes\n";
  test::scoped_env home_env{"HOME", home.string()};
  test::temp_dir scripts;
  auto agent = scripts.path() / "agent.sh";
  std::ofstream{agent} << "#!/bin/sh\n"
                       << "ls -A \"$HOME/.ssh\" > scratch/ssh.txt\n"
                       << "cat \"$HOME/.netrc\" \"$HOME/notes.txt\" "
                       << "> scratch/home.txt\n"
                       << "echo \"// attempt $$\" >> kernel.cpp\n"
                       << "echo done\n";
  test::temp_dir tmp;
  auto run_dir = run_cli_agent(tmp.path(), agent, 1, 1);
  uint64_t attempts = 0;
  for (const auto& w : fs::directory_iterator{run_dir / "workspaces"}) {
    if (!fs::exists(w.path() / "scratch" / "ssh.txt"))
      continue;
    attempts += 1;
    CHECK(read_text(w.path() / "scratch" / "ssh.txt").empty());
    CHECK(read_text(w.path() / "scratch" / "home.txt") == "notes\n");
  }
  CHECK(attempts >= 1);
}
