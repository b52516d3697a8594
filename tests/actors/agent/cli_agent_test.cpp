// Specification of the cli agent (cli_agent.hpp) against fake coding-agent
// CLIs (tests/actors/agent/fakes): usage parsing per preset, the candidate
// taken from kernel.cpp or a fenced block, rejected edits, crashes, hangs,
// retries, budgets, ./eval through a fake device, the actor, and the start-up
// check.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/agent/cli_agent.hpp"
#include "actors/protocol/error.hpp"
#include "runtime/system_setup.hpp"
#include "tests/actors/agent/cli_fixtures.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

using namespace eat;
namespace fs = std::filesystem;

namespace {

using eat::test::actor_fixture;
using eat::test::fake_cli;

using eat::test::read_text;

assignment sample_assignment() {
  assignment a;
  a.team = "t1";
  a.agent = "a1";
  a.role = "implementer";
  a.strategy = "local";
  a.task.name = "sgemm";
  a.task.kind = "gemm";
  a.task.dtype = "float32";
  a.task.baseline_source = "int baseline();\n";
  a.task.workloads = {{"m64", {{"m", 64}}}};
  a.learning = "# Learnings\nTiles of 64 help.\n";
  a.history.push_back({"c1", "custom", {}, eval_status::passed, 1.5});
  return a;
}

/// Options running `script` as a custom CLI that speaks `format`.
cli_agent_options fake_options(const fs::path& work, const std::string& script,
                               std::vector<std::string> args = {},
                               const std::string& format = "claude") {
  cli_agent_options o;
  o.preset = "custom";
  o.program = fake_cli(script);
  // A custom preset needs arguments; the workspace is a harmless one.
  o.args = args.empty() ? std::vector<std::string>{"{workspace}"}
                        : std::move(args);
  o.output_format = format;
  o.prompt_input = "stdin";
  o.work_dir = work;
  o.prompts_dir = EAT_PROMPTS_DIR;
  o.timeout_s = 60;
  o.idle_timeout_s = 60;
  o.kill_grace_s = 5;
  o.retries = 3;
  o.retry_base_s = 0;
  o.keeper_program = EAT_KEEPER_PATH; // as eat runs them
  return o;
}

cli_outcome run(const cli_agent_options& o, const assignment& a) {
  eval_handler no_eval = [](const std::string&) {
    return std::string{"status: unavailable\n"};
  };
  return run_cli_assignment(a, a.task.baseline_source, o, 1, no_eval);
}

} // namespace

TEST_CASE("cli agent: a Claude-style run yields kernel.cpp and the result's usage") {
  test::temp_dir work;
  setenv("EAT_TEST_KEY", "k", 1);
  setenv("EAT_TEST_SECRET", "s", 1);
  cli_agent_options o = fake_options(work.path(), "claude_edit.sh");
  o.preset = "claude";
  o.args.clear();
  o.output_format.clear();
  o.prompt_input.clear();
  o.max_turns = 7;
  o.env_allow = {"EAT_TEST_KEY"};
  auto a = sample_assignment();
  auto out = run(o, a);
  INFO(out.reply.transcript);
  CHECK(out.reply.failure.empty());
  CHECK(out.attempts == 1);
  REQUIRE(out.reply.candidates.size() == 1);
  const auto& c = out.reply.candidates[0];
  CHECK(c.source == "int improved_kernel();\n");
  CHECK(c.family == "custom");
  CHECK((c.team == "t1" && c.agent == "a1" && c.task == "sgemm"));
  const auto& u = out.reply.usage;
  CHECK(u.input == 12);
  CHECK(u.cache_read == 3100);
  CHECK(u.cache_write == 210);
  CHECK(u.output == 77);
  CHECK(u.reasoning == 0);
  CHECK(u.cost_usd == Approx(0.0421));
  CHECK(out.reply.tokens == 3399);
  CHECK(c.tokens == 3399);
  CHECK_THAT(out.reply.transcript, Catch::Contains("\"type\":\"result\""));
  // The workspace: the prompt went to stdin, only allowed variables reached
  // the CLI, and the harness files are there.
  CHECK(out.workspace.parent_path() == work.path());
  CHECK(out.workspace.filename() == "t1-a1-1");
  auto task_md = read_text(out.workspace / "TASK.md");
  CHECK_THAT(task_md, Catch::Contains("sgemm"));
  CHECK(read_text(out.workspace / "scratch" / "prompt.txt") == task_md);
  auto env = read_text(out.workspace / "scratch" / "env.txt");
  CHECK_THAT(env, Catch::Contains("EAT_TEST_KEY=k"));
  CHECK_THAT(env, !Catch::Contains("EAT_TEST_SECRET"));
  CHECK(read_text(out.workspace / "LEARNINGS.md") == a.learning);
  CHECK_THAT(read_text(out.workspace / "NOTES.md"), Catch::Contains("| c1 |"));
  CHECK_THAT(read_text(out.workspace / "AGENTS.md"),
    Catch::Contains("Edit only `kernel.cpp`"));
  CHECK(read_text(out.workspace / "CLAUDE.md")
        == read_text(out.workspace / "AGENTS.md"));
}

TEST_CASE("cli agent: Codex-style turns are summed with cached input split off") {
  test::temp_dir work;
  auto o = fake_options(work.path(), "codex_turns.sh", {}, "codex");
  auto out = run(o, sample_assignment());
  INFO(out.reply.transcript);
  CHECK(out.reply.failure.empty());
  REQUIRE(out.reply.candidates.size() == 1);
  CHECK(out.reply.candidates[0].source == "int codex_kernel();\n");
  CHECK(out.reply.usage.input == 900);
  CHECK(out.reply.usage.cache_read == 2100);
  CHECK(out.reply.usage.output == 600);
  CHECK(out.reply.usage.reasoning == 100);
  CHECK(out.reply.tokens == 3700);
}

TEST_CASE("cli agent: a silent CLI is stopped by the idle timeout") {
  test::temp_dir work;
  auto o = fake_options(work.path(), "hang.sh");
  o.idle_timeout_s = 0.2;
  auto out = run(o, sample_assignment());
  CHECK_THAT(out.reply.failure, Catch::Contains("idle"));
  CHECK(out.reply.candidates.empty());
  CHECK(out.attempts == 1);
}

TEST_CASE("cli agent: a run that is ending stops the CLI and retries nothing") {
  test::temp_dir work;
  auto o = fake_options(work.path(), "hang.sh");
  o.timeout_s = 600;
  o.idle_timeout_s = 600;
  o.halt = std::make_shared<std::atomic<bool>>(true);
  auto out = run(o, sample_assignment());
  CHECK(out.reply.failure == "hang.sh stopped: the run is ending");
  CHECK(out.reply.candidates.empty());
  CHECK(out.attempts == 1);
}

TEST_CASE("cli agent: a crash fails the attempt and says how") {
  test::temp_dir work;
  auto out = run(fake_options(work.path(), "crash.sh", {"exit3"}),
                 sample_assignment());
  CHECK(out.reply.failure == "crash.sh exited with status 3");
  CHECK(out.reply.candidates.empty());
  CHECK(out.attempts == 1);
  out = run(fake_options(work.path(), "crash.sh", {"segv"}),
            sample_assignment());
  CHECK(out.reply.failure == "crash.sh killed by SIGSEGV");
}

TEST_CASE("cli agent: a rate-limited attempt is retried, an auth error is not") {
  test::temp_dir work;
  test::temp_dir state;
  setenv("FAKE_STATE", state.path().c_str(), 1);
  auto o = fake_options(work.path(), "rate_limit.sh");
  o.env_allow = {"FAKE_STATE"};
  auto out = run(o, sample_assignment());
  INFO(out.reply.transcript);
  CHECK(out.reply.failure.empty());
  CHECK(out.attempts == 2);
  CHECK(read_text(state.path() / "calls") == "call\ncall\n");
  REQUIRE(out.reply.candidates.size() == 1);
  CHECK(out.reply.candidates[0].source == "int after_retry();\n");
  // Both attempts' tokens count.
  CHECK(out.reply.usage.input == 105);
  CHECK(out.reply.tokens == 125);
  CHECK_THAT(out.reply.transcript, Catch::Contains("=== attempt 2"));
  fs::remove(state.path() / "calls");
  o.args = {"auth"};
  out = run(o, sample_assignment());
  CHECK(out.attempts == 1);
  CHECK(read_text(state.path() / "calls") == "call\n");
  CHECK_THAT(out.reply.failure, Catch::Contains("exited with status 1"));
}

TEST_CASE("cli agent: a run that stays rate limited gives up after the retries") {
  test::temp_dir work;
  auto o = fake_options(work.path(), "crash.sh", {"exit3"});
  o.program = "/bin/sh";
  o.args = {"-c", "echo 'Error: 529 overloaded' >&2; exit 1"};
  o.retries = 2;
  auto out = run(o, sample_assignment());
  CHECK(out.attempts == 3);
  CHECK_THAT(out.reply.failure, Catch::EndsWith("(after 3 attempts)"));
}

TEST_CASE("cli agent: editing a file outside kernel.cpp and scratch/ rejects the attempt") {
  test::temp_dir work;
  auto out = run(fake_options(work.path(), "edit_outside.sh", {"other"}),
                 sample_assignment());
  CHECK_THAT(out.reply.failure, Catch::Contains("rejected"));
  CHECK_THAT(out.reply.failure, Catch::Contains("notes.txt"));
  CHECK(out.reply.candidates.empty());
  out = run(fake_options(work.path(), "edit_outside.sh", {"eval"}),
            sample_assignment());
  CHECK_THAT(out.reply.failure, Catch::Contains("changed eval"));
  CHECK(out.reply.candidates.empty());
  out = run(fake_options(work.path(), "edit_outside.sh", {"scratch"}),
            sample_assignment());
  CHECK(out.reply.failure.empty());
  CHECK(out.reply.candidates.size() == 1);
}

TEST_CASE("cli agent: a kernel.cpp that is no regular file of at most 4 MiB "
          "rejects the attempt, unread") {
  // eat waited for ever on the named pipe, read /dev/zero until memory ran
  // out, and read the linked file for the agent (as root: any file).
  test::temp_dir work;
  std::ofstream{work.path() / "secret.txt"} << "secret\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
    {{"fifo"}, "rejected: kernel.cpp: a named pipe, not a regular file"},
    {{"zero"}, "rejected: kernel.cpp: a symbolic link, not a regular file"},
    {{"link", (work.path() / "secret.txt").string()},
      "rejected: kernel.cpp: a symbolic link, not a regular file"},
    {{"big"}, "rejected: kernel.cpp: larger than 4 MiB"}};
  for (const auto& [args, failure] : cases) {
    auto o = fake_options(work.path(), "odd_kernel.sh", args);
    auto out = run(o, sample_assignment());
    INFO(args[0] << ": " << out.reply.transcript);
    CHECK(out.reply.failure == failure);
    CHECK(out.reply.candidates.empty());
  }
}

TEST_CASE("cli agent: an unchanged kernel.cpp falls back to the last fenced block") {
  test::temp_dir work;
  auto out = run(fake_options(work.path(), "fenced.sh"), sample_assignment());
  INFO(out.reply.transcript);
  CHECK(out.reply.failure.empty());
  REQUIRE(out.reply.candidates.size() == 1);
  CHECK(out.reply.candidates[0].source == "int fenced_kernel();\n");
  // Nothing at all: a failure that says so.
  auto o = fake_options(work.path(), "fenced.sh");
  o.program = "/bin/echo";
  o.args = {"nothing to see"};
  o.output_format = "plain";
  out = run(o, sample_assignment());
  CHECK_THAT(out.reply.failure, Catch::StartsWith("no kernel"));
}

TEST_CASE("cli agent: over budget stops the CLI and keeps its partial kernel") {
  test::temp_dir work;
  auto a = sample_assignment();
  a.token_budget = 1000;
  auto out = run(fake_options(work.path(), "over_budget.sh"), a);
  CHECK(out.reply.failure == "over token budget");
  REQUIRE(out.reply.candidates.size() == 1);
  CHECK(out.reply.candidates[0].source == "int partial_kernel();\n");
  CHECK(out.reply.tokens == 200 + 5500);
  CHECK_THAT(out.reply.transcript, Catch::Contains("\"id\":\"m2\""));
}

namespace {

device_actor::behavior_type passing_device(device_actor::pointer) {
  return {
    [](evaluate_atom, const task_spec&, const candidate& c,
       uint64_t) -> eval_result {
      eval_result r;
      r.candidate = c.id;
      r.status = c.source == "int evaluated_kernel();\n"
                   ? eval_status::passed
                   : eval_status::incorrect;
      r.geomean_speedup = 1.75;
      return r;
    },
  };
}

} // namespace

TEST_CASE("cli agent: ./eval benchmarks the workspace's kernel on the device") {
  actor_fixture f;
  test::temp_dir work;
  auto o = fake_options(work.path(), "uses_eval.sh");
  o.eat_program = EAT_FAKE_EAT;
  o.device = f.sys->spawn(passing_device);
  auto a = sample_assignment();
  auto eval = device_eval_handler(*f.sys, o.device, a.task, candidate{}, 1, 30);
  auto out = run_cli_assignment(a, a.task.baseline_source, o, 4, eval);
  INFO(out.reply.transcript);
  CHECK(out.reply.failure.empty());
  auto printed = read_text(out.workspace / "scratch" / "eval.txt");
  CHECK_THAT(printed, Catch::StartsWith("status: passed\nspeedup: 1.750x"));
  CHECK_THAT(printed, Catch::EndsWith("exit 0\n"));
  CHECK_FALSE(fs::exists(out.workspace / ".eat" / "eval.sock"));
}

TEST_CASE("cli agent: the actor answers propose with the CLI's candidate") {
  actor_fixture f;
  test::temp_dir work;
  auto o = fake_options(work.path(), "codex_turns.sh", {}, "codex");
  auto agent = f.sys->spawn<caf::detached>(cli_agent, o);
  caf::scoped_actor self{*f.sys};
  agent_reply reply;
  self->request(agent, std::chrono::seconds(60), propose_atom_v,
                sample_assignment())
    .receive([&](agent_reply& r) { reply = std::move(r); },
             [&](caf::error& err) { FAIL(render(err)); });
  CHECK(reply.failure.empty());
  REQUIRE(reply.candidates.size() == 1);
  CHECK(reply.candidates[0].source == "int codex_kernel();\n");
  CHECK(reply.tokens == 3700);
  self->send_exit(agent, caf::exit_reason::user_shutdown);
}

TEST_CASE("cli agent: a resumed run's agent skips workspaces that exist, so "
          "its ./eval ids stay unique") {
  // After a resume the serial started at 1 again, and the run's log had
  // two ./eval t1-a1-1-eval1.
  actor_fixture f;
  test::temp_dir work;
  fs::create_directories(work.path() / "t1-a1-1"); // the first process's
  auto o = fake_options(work.path(), "uses_eval.sh");
  o.eat_program = EAT_FAKE_EAT;
  o.device = f.sys->spawn(passing_device);
  auto agent = f.sys->spawn<caf::detached>(cli_agent, o);
  caf::scoped_actor self{*f.sys};
  self
    ->request(
      agent, std::chrono::seconds(60), propose_atom_v, sample_assignment())
    .receive(
      [&](agent_reply& r) {
        CHECK(r.failure.empty());
      },
      [&](caf::error& err) {
        FAIL(render(err));
      });
  CHECK(fs::is_empty(work.path() / "t1-a1-1"));
  CHECK(fs::exists(work.path() / "t1-a1-2" / "scratch" / "eval.txt"));
  self->send_exit(agent, caf::exit_reason::user_shutdown);
}

TEST_CASE("cli agent: the start-up check names a missing program") {
  test::temp_dir work;
  cli_agent_options o;
  o.preset = "claude";
  o.program = "eat-no-such-claude";
  o.work_dir = work.path() / "agents";
  o.prompts_dir = EAT_PROMPTS_DIR;
  auto bad = check_cli_agent(o);
  REQUIRE_FALSE(bad);
  CHECK_THAT(render(bad.error()),
             Catch::Contains(
               "agents.cli: program 'eat-no-such-claude' not found in PATH"));
  o.program = "sh";
  CHECK(check_cli_agent(o));
  CHECK(fs::is_directory(o.work_dir));
  o.prompts_dir = work.path() / "no-prompts";
  auto no_prompts = check_cli_agent(o);
  REQUIRE_FALSE(no_prompts);
  CHECK_THAT(render(no_prompts.error()), Catch::Contains("implementer.md"));
  o.prompts_dir = EAT_PROMPTS_DIR;
  o.keeper_program = (work.path() / "eat-keeper").string();
  auto no_keeper = check_cli_agent(o);
  REQUIRE_FALSE(no_keeper);
  CHECK_THAT(render(no_keeper.error()),
    Catch::Contains("eat-keeper not found: eat-keeper is built next "
                    "to eat"));
  o.preset = "cursor";
  CHECK_FALSE(check_cli_agent(o));
}

TEST_CASE("cli agent: template and baseline parents start from their source") {
  actor_fixture f;
  auto a = sample_assignment();
  auto k = starting_kernel(*f.sys, a, store_actor{});
  REQUIRE(k);
  CHECK(*k == "int baseline();\n");
  a.task.families = {{"tiled", "tile={{t}}", {{"t", {"8", "16"}}}}};
  a.parent = {"c3", "tiled", {{"t", "16"}}, eval_status::passed, 2};
  k = starting_kernel(*f.sys, a, store_actor{});
  REQUIRE(k);
  CHECK(*k == "tile=16");
  a.parent.family = "custom";
  CHECK_FALSE(starting_kernel(*f.sys, a, store_actor{}));
}
