// Specification of crash recovery, end to end: a real `eat run` is killed
// with SIGKILL in the middle of its evolution, and `eat resume` finishes it
// without repeating or losing a committed evaluation.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/agent/run_registry.hpp"
#include "actors/protocol/candidate.hpp"
#include "actors/protocol/progress.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/event_log.hpp"
#include "persistence/store.hpp"
#include "tests/runtime/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace eat;

namespace {

constexpr uint64_t evaluations = 6;

fs::path write_config(
  const fs::path& dir, uint64_t max_evaluations = evaluations) {
  auto file = dir / "config.toml";
  std::ofstream out{file};
  out << "[run]\nname = \"resume-test\"\ntask = \"sgemm\"\n"
      << "tasks_dir = \"" << EAT_SOURCE_DIR << "/kernels\"\n"
      << "root = \"" << dir.string() << "\"\nseed = 5\n"
      << "max_evaluations = " << max_evaluations << "\n"
      << "[timing]\nwarmup = 1\nmin_samples = 3\nmin_time_s = 0.01\n"
      << "max_time_s = 0.2\ncheck_seeds = 2\n";
  return file;
}

std::vector<event> read_log(const fs::path& run_dir) {
  persistence::store_options opts;
  opts.read_only = true;
  auto store = persistence::store::open(run_dir / "store", opts);
  REQUIRE(store);
  persistence::event_log log{**store};
  auto events = log.read(1);
  REQUIRE(events);
  return *events;
}

template<class T>
std::vector<T> bodies(const std::vector<event>& log, event_kind kind) {
  std::vector<T> out;
  for (const auto& e : log)
    if (e.kind == kind) {
      auto x = wire::decode<T>(e.body);
      REQUIRE(x);
      out.push_back(*x);
    }
  return out;
}

} // namespace

TEST_CASE("eat resume finishes a run killed with SIGKILL, keeping every "
          "committed evaluation and repeating none") {
  test::temp_dir tmp;
  auto config = write_config(tmp.path());
  auto run_dir = tmp.path() / "run";
  // Kill `eat run` right after it reports its second evaluation.
  {
    test::child_process run{
      EAT_BINARY, {"run", config.string(), "--run-dir", run_dir.string()}};
    std::string line;
    int reported = 0;
    while (reported < 2 && run.read_line(line))
      if (!line.empty() && line[0] == '[')
        ++reported;
    REQUIRE(reported == 2);
    run.kill(SIGKILL);
    auto status = run.wait();
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
  }
  // The store a killed run leaves behind is consistent.
  {
    test::child_process fsck{EAT_BINARY, {"fsck", run_dir.string()}};
    std::string checked;
    auto status = fsck.finish(checked);
    INFO(checked);
    CHECK(WEXITSTATUS(status) == 0);
  }
  // What a kill in the middle of a compile and an evaluation leaves.
  std::filesystem::create_directories(
    run_dir / "work/scratch/run.killed/locked");
  std::filesystem::permissions(run_dir / "work/scratch/run.killed/locked",
    std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  std::filesystem::create_directories(run_dir / "work/cache/build.killed");
  auto before = read_log(run_dir);
  auto done_before
    = bodies<eval_result>(before, event_kind::evaluation_finished);
  REQUIRE(done_before.size() >= 2);
  REQUIRE(done_before.size() < evaluations);
  CHECK(bodies<run_summary>(before, event_kind::run_finished).empty());

  // Moved meanwhile: the registry of runs, which hides every run from the
  // others' coding-agent CLIs, learns the new folder from the resume.
  auto moved = tmp.path() / "moved";
  std::filesystem::rename(run_dir, moved);
  run_dir = moved;
  auto registry = run_registry_dir();
  REQUIRE(registry);
  auto registered = [&] {
    auto runs = registered_runs(*registry);
    return std::find(runs.begin(), runs.end(), run_dir) != runs.end();
  };
  CHECK_FALSE(registered());

  test::child_process resume{EAT_BINARY, {"resume", run_dir.string()}};
  std::string output;
  auto status = resume.finish(output);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK_THAT(output, Catch::Contains("resuming run"));
  CHECK_THAT(output, Catch::Contains("best speedup"));
  CHECK(registered());
  // Two, or more if the kill came in the middle of a compile or an
  // evaluation of its own.
  CHECK_THAT(output, Catch::Contains("unfinished build or evaluation "
                                     "directories that a stopped process left "
                                     "in work/"));
  CHECK_FALSE(std::filesystem::exists(run_dir / "work/scratch/run.killed"));
  CHECK_FALSE(std::filesystem::exists(run_dir / "work/cache/build.killed"));

  auto after = read_log(run_dir);
  // Nothing committed before the kill changed or went missing.
  REQUIRE(after.size() > before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    CHECK(after[i].seq == before[i].seq);
    CHECK(after[i].kind == before[i].kind);
    CHECK(after[i].body == before[i].body);
  }
  // Exactly the budget was evaluated, each candidate once.
  auto results = bodies<eval_result>(after, event_kind::evaluation_finished);
  CHECK(results.size() == evaluations);
  std::set<std::string> evaluated;
  for (const auto& r : results)
    CHECK(evaluated.insert(r.candidate).second);
  std::set<std::string> submitted;
  for (const auto& c :
    bodies<candidate>(after, event_kind::candidate_submitted))
    CHECK(submitted.insert(c.id).second);
  CHECK(submitted == evaluated);
  CHECK(bodies<run_resumed>(after, event_kind::run_resumed).size() == 1);
  CHECK(after.back().kind == event_kind::run_finished);

  test::child_process fsck{EAT_BINARY, {"fsck", run_dir.string()}};
  std::string checked;
  CHECK(WEXITSTATUS(fsck.finish(checked)) == 0);
  CHECK_THAT(checked, Catch::EndsWith("consistent\n"));

  // Resuming a run whose budget is spent only reports it.
  test::child_process again{EAT_BINARY, {"resume", run_dir.string()}};
  std::string reported;
  CHECK(WEXITSTATUS(again.finish(reported)) == 0);
  CHECK_THAT(reported, Catch::Contains("is complete: 6 of 6 evaluations"));

  test::child_process show{EAT_BINARY, {"status", run_dir.string()}};
  std::string shown;
  status = show.finish(shown);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(shown, Catch::Contains("evaluations: 6 of 6"));
}

TEST_CASE("a run directory cannot be resumed while a process holds it") {
  test::temp_dir tmp;
  auto config = write_config(tmp.path());
  auto run_dir = tmp.path() / "run";
  test::child_process run{
    EAT_BINARY, {"run", config.string(), "--run-dir", run_dir.string()}};
  std::string line;
  while (run.read_line(line) && line.rfind("run directory:", 0) != 0) {
  }
  test::child_process resume{EAT_BINARY, {"resume", run_dir.string()}};
  std::string output;
  auto status = resume.finish(output);
  CHECK(WEXITSTATUS(status) == 4);
  CHECK_THAT(output, Catch::Contains("in use by another eat process"));
  run.kill(SIGKILL);
  run.wait();
}

TEST_CASE("a run whose reader goes away finishes its evaluations and exits "
          "0, its output dropped") {
  // `eat run ... | head -1`: SIGPIPE killed the run after its first
  // evaluation, with no run_finished in its log.
  test::temp_dir tmp;
  auto config = write_config(tmp.path(), 3);
  auto run_dir = tmp.path() / "run";
  test::child_process run{
    EAT_BINARY, {"run", config.string(), "--run-dir", run_dir.string()}};
  std::string line;
  REQUIRE(run.read_line(line));
  run.close_output();
  auto status = run.wait();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  auto log = read_log(run_dir);
  REQUIRE(!log.empty());
  CHECK(log.back().kind == event_kind::run_finished);
  CHECK(bodies<eval_result>(log, event_kind::evaluation_finished).size() == 3);
}

TEST_CASE("SIGINT stops a run after the evaluation in flight, logs why, and "
          "exits 130 with the command that continues it") {
  test::temp_dir tmp;
  auto config = write_config(tmp.path());
  auto run_dir = tmp.path() / "run";
  test::child_process run{EAT_BINARY,
                          {"run", config.string(), "--run-dir",
                           run_dir.string()}};
  std::string line;
  while (run.read_line(line) && line.rfind("[1/", 0) != 0) {
  }
  REQUIRE(line.rfind("[1/", 0) == 0);
  run.kill(SIGINT);
  std::string rest;
  auto status = run.finish(rest);
  INFO(rest);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK_THAT(rest, Catch::Contains("stopped: interrupted by SIGINT"));
  CHECK_THAT(rest, Catch::Contains("continue with: eat resume"));
  auto log = read_log(run_dir);
  REQUIRE(!log.empty());
  CHECK(log.back().kind == event_kind::run_finished);
  auto done = bodies<eval_result>(log, event_kind::evaluation_finished);
  CHECK(done.size() < evaluations);
  test::child_process fsck{EAT_BINARY, {"fsck", run_dir.string()}};
  std::string checked;
  CHECK(WEXITSTATUS(fsck.finish(checked)) == 0);
}

TEST_CASE("SIGINT stops a run at once while a cli agent's program is still "
          "working, and stops the program") {
  // The run waited for the program up to its timeout_s (1800 s by
  // default): Ctrl-C seemed to do nothing.
  test::temp_dir tmp;
  // The program writes to a pipe in the tasks folder, which it sees (read-
  // only) where the run root is hidden from it (docs/agent-cli.md).
  auto tasks = tmp.path() / "tasks";
  fs::create_directories(tasks);
  fs::copy(fs::path{EAT_SOURCE_DIR} / "kernels" / "sgemm", tasks / "sgemm",
    fs::copy_options::recursive);
  auto started = tasks / "started";
  REQUIRE(::mkfifo(started.c_str(), 0600) == 0);
  int fifo = ::open(started.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(fifo >= 0);
  auto agent = tmp.path() / "agent.sh";
  std::ofstream{agent} << "#!/bin/sh\necho started > '" << started.string()
                       << "'\nexec sleep 600\n";
  fs::permissions(agent, fs::perms::owner_all);
  auto config = tmp.path() / "config.toml";
  std::ofstream{config}
    << "[run]\ntask = \"sgemm\"\ntasks_dir = \"" << tasks.string()
    << "\"\nroot = \"" << (tmp.path() / "runs").string()
    << "\"\nmax_evaluations = 2\n[agents]\nbackend = \"cli\"\n"
    << "[agents.cli]\npreset = \"custom\"\nprogram = \"" << agent.string()
    << "\"\nargs = [\"{workspace}\"]\noutput_format = \"plain\"\n"
    << "prompt_input = \"none\"\ntimeout_s = 600\nidle_timeout_s = 600\n"
    << "retries = 0\n";
  auto start = std::chrono::steady_clock::now();
  test::child_process run{EAT_BINARY,
    {"run", config.string(), "--run-dir", (tmp.path() / "run").string()}};
  // The program has started once it writes to the pipe.
  pollfd ready{fifo, POLLIN, 0};
  REQUIRE(::poll(&ready, 1, 120'000) == 1);
  ::close(fifo);
  run.kill(SIGINT);
  std::string rest;
  auto status = run.finish(rest);
  auto seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  INFO(rest);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK_THAT(rest, Catch::Contains("stopped: interrupted by SIGINT"));
  CHECK(seconds < 120);
}
