// Specification of configuration files (runtime/config.hpp, docs/config.md).

#include "runtime/config.hpp"

#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "runtime/task_file.hpp"
#include "tests/runtime/config_fixtures.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

namespace fs = std::filesystem;

using namespace std::string_literals;

namespace {

using eat::test::read_text;

/// The known sections, as messages list them.
const std::string known_sections
  = "[run], [supervisor], [supervisor.llm], [agents], [agents.builtin], "
    "[agents.cli], [agents.http], [devices.cpu], [devices.cuda], "
    "[devices.hip], [devices.sim], [devices.pool], [timing], [store]";

const fs::path source_dir{EAT_SOURCE_DIR};
const fs::path fixtures = source_dir / "tests/runtime/fixtures";
const fs::path configs = fixtures / "configs";
const fs::path tasks = fixtures / "tasks";

using eat::test::failure;
using eat::test::message;
using eat::test::run_ok;
using eat::test::test_file;

} // namespace

TEST_CASE("a configuration with only run.task gets every default") {
  auto file = configs / "minimal.toml";
  auto cfg = eat::load_config(file);
  REQUIRE(cfg);
  CHECK(cfg->file == file);
  CHECK(cfg->text == read_text(file));
  CHECK(cfg->run.name == "run");
  CHECK(cfg->run.task == "tiny_gemm");
  CHECK(cfg->run.root == configs / "runs");
  CHECK(cfg->run.seed == 1);
  CHECK(cfg->run.max_evaluations == 32);
  CHECK(cfg->run.max_wall_s == 3600);
  CHECK(cfg->supervisor.teams == 1);
  CHECK(cfg->supervisor.agents_per_team == 1);
  CHECK(cfg->supervisor.plateau_window == 8);
  CHECK(cfg->supervisor.plateau_threshold == 0.02);
  CHECK(cfg->run.target_speedup == 0);
  CHECK(cfg->run.target_sol_fraction == 0);
  CHECK(cfg->builtin.strategy == "local");
  CHECK(cfg->builtin.tokens_per_proposal == 1000);
  CHECK(cfg->builtin.explore_rounds == 6);
  CHECK(cfg->store.map_size_mib == 65536);
  CHECK(cfg->cpu_slots == 1);
  CHECK(cfg->cpu_cores.empty());
  eat::devices::cpu_options cpu;
  CHECK(cfg->cpu.compiler == cpu.compiler);
  CHECK(cfg->cpu.flags == cpu.flags);
  CHECK(cfg->cpu.compile_timeout_s == cpu.compile_timeout_s);
  CHECK(cfg->cpu.eval_timeout_s == cpu.eval_timeout_s);
  CHECK(cfg->cpu.address_space_mib == cpu.address_space_mib);
  CHECK(cfg->cpu.run_as == "nobody");
  CHECK(cfg->cpu.core == -1);
  CHECK(cfg->cpu.runner_path.empty());
  eat::devices::timing_options timing;
  CHECK(cfg->timing.warmup == timing.warmup);
  CHECK(cfg->timing.min_samples == timing.min_samples);
  CHECK(cfg->timing.min_time_s == timing.min_time_s);
  CHECK(cfg->timing.max_time_s == timing.max_time_s);
  CHECK(cfg->timing.max_rel_se == timing.max_rel_se);
  CHECK(cfg->timing.check_seeds == timing.check_seeds);
  CHECK(cfg->timing.reference_samples == 4);
  // Re-verification as BENCHMARK-PROTOCOL.md section 4 has it: above 3x the
  // best or 10x the baseline; more than 10 % apart rejects.
  CHECK(cfg->pool.reverify_factor == 3);
  CHECK(cfg->pool.reverify_baseline == 10);
  CHECK(cfg->pool.reverify_tolerance == 1.1);
  CHECK(cfg->pool.reverify_tolerance_cpu == 1.25);
}

TEST_CASE("GPU devices stop sampling at a relative standard error of 0.5 % "
          "unless [timing] sets max_rel_se") {
  auto plain = eat::parse_config(run_ok + "[timing]\nwarmup = 3\n", test_file);
  REQUIRE(plain);
  CHECK(plain->timing.max_rel_se == 0.01);
  CHECK(eat::gpu_timing(*plain).max_rel_se == 0.005);
  CHECK(eat::gpu_timing(*plain).warmup == 3);
  auto set = eat::parse_config(
    run_ok + "[timing]\nmax_rel_se = 0.02\n", test_file);
  REQUIRE(set);
  CHECK(set->timing.max_rel_se == 0.02);
  CHECK(eat::gpu_timing(*set).max_rel_se == 0.02);
}

TEST_CASE("[devices.cpu] kernel_processes runs kernels in processes of "
          "their own, off for the builtin agents unless set") {
  auto plain = eat::parse_config(run_ok, test_file);
  REQUIRE(plain);
  CHECK_FALSE(plain->cpu.kernel_processes);
  auto set = eat::parse_config(
    run_ok + "[devices.cpu]\nkernel_processes = true\n", test_file);
  REQUIRE(set);
  CHECK(set->cpu.kernel_processes);
  auto bad = eat::parse_config(
    run_ok + "[devices.cpu]\nkernel_processes = \"yes\"\n", test_file);
  REQUIRE_FALSE(bad);
  CHECK_THAT(eat::render(bad.error()), Catch::Contains("kernel_processes"));
}

TEST_CASE("[devices.cpu] kernel_processes is on for the kernels of http and "
          "cli agents unless the section turns it off") {
  const std::string http
    = run_ok + "[agents]\nbackend = \"http\"\n[agents.http]\nmodel = \"m\"\n";
  const std::string cli = run_ok
                          + "[agents]\nbackend = \"cli\"\n[agents.cli]\n"
                            "preset = \"claude\"\n";
  for (const auto& agents : {http, cli}) {
    INFO(agents);
    auto plain = eat::parse_config(agents, test_file);
    REQUIRE(plain);
    CHECK(plain->cpu.kernel_processes);
    auto off = eat::parse_config(
      agents + "[devices.cpu]\nkernel_processes = false\n", test_file);
    REQUIRE(off);
    CHECK_FALSE(off->cpu.kernel_processes);
    auto other
      = eat::parse_config(agents + "[devices.cpu]\nslots = 1\n", test_file);
    REQUIRE(other);
    CHECK(other->cpu.kernel_processes);
  }
}

TEST_CASE("[devices.cuda] and [devices.hip] name the user GPU kernel code "
          "runs as when eat is root, nobody unless set") {
  auto plain = eat::parse_config(run_ok, test_file);
  REQUIRE(plain);
  CHECK(plain->cuda.run_as == "nobody");
  CHECK(plain->hip.run_as == "nobody");
  auto set = eat::parse_config(run_ok
                                 + "[devices.cuda]\nrun_as = \"daemon\"\n"
                                   "[devices.hip]\nrun_as = \"\"\n",
    test_file);
  REQUIRE(set);
  CHECK(set->cuda.run_as == "daemon");
  CHECK(set->hip.run_as.empty());
}

TEST_CASE("[devices.cuda] and [devices.hip] runners make a user namespace "
          "when eat is not root, unless user_namespace = false") {
  auto plain = eat::parse_config(run_ok, test_file);
  REQUIRE(plain);
  CHECK(plain->cuda.user_namespace);
  CHECK(plain->hip.user_namespace);
  auto set = eat::parse_config(
    run_ok + "[devices.cuda]\nuser_namespace = false\n", test_file);
  REQUIRE(set);
  CHECK_FALSE(set->cuda.user_namespace);
  CHECK(set->hip.user_namespace);
}

TEST_CASE("[devices.cuda] and [devices.hip] runners see only their own GPU, "
          "unless only_its_gpu = false") {
  auto plain = eat::parse_config(run_ok, test_file);
  REQUIRE(plain);
  CHECK(plain->cuda.only_its_gpu);
  CHECK(plain->hip.only_its_gpu);
  auto set = eat::parse_config(
    run_ok + "[devices.hip]\nonly_its_gpu = false\n", test_file);
  REQUIRE(set);
  CHECK(set->cuda.only_its_gpu);
  CHECK_FALSE(set->hip.only_its_gpu);
}

TEST_CASE("every key of a full configuration is read") {
  auto cfg = eat::load_config(configs / "full.toml");
  REQUIRE(cfg);
  CHECK(cfg->run.name == "full-run_1");
  CHECK(cfg->run.task == "tiny_gemm");
  CHECK(cfg->run.seed == 7);
  CHECK(cfg->run.max_evaluations == 100);
  CHECK(cfg->run.max_wall_s == 90.5);
  CHECK(cfg->supervisor.teams == 3);
  CHECK(cfg->supervisor.agents_per_team == 2);
  CHECK(cfg->supervisor.plateau_window == 5);
  CHECK(cfg->supervisor.plateau_threshold == 0.1);
  CHECK(cfg->builtin.strategy == "explore");
  CHECK(cfg->builtin.tokens_per_proposal == 0);
  CHECK(cfg->builtin.explore_rounds == 9);
  CHECK(cfg->cpu_slots == 2);
  CHECK(cfg->cpu_cores == std::vector<int>{1, 0});
  CHECK(cfg->cpu.compiler == "clang++");
  CHECK(cfg->cpu.flags == std::vector<std::string>{"-O2", "-std=c++20"});
  CHECK(cfg->cpu.compile_timeout_s == 30);
  CHECK(cfg->cpu.eval_timeout_s == 12.5);
  CHECK(cfg->cpu.address_space_mib == 2048);
  CHECK(cfg->cpu.run_as == "daemon");
  CHECK(cfg->timing.warmup == 3);
  CHECK(cfg->timing.min_samples == 20);
  CHECK(cfg->timing.min_time_s == 0);
  CHECK(cfg->timing.max_time_s == 2);
  CHECK(cfg->timing.max_rel_se == 0.05);
  CHECK(cfg->timing.check_seeds == 7);
  CHECK(cfg->timing.reference_samples == 9);
  CHECK(cfg->cpu.timing.max_rel_se == 0.05);
  CHECK(cfg->store.map_size_mib == 128);
}

TEST_CASE("relative paths are resolved against the configuration's folder") {
  auto cfg = eat::load_config(configs / "full.toml");
  REQUIRE(cfg);
  CHECK(cfg->run.root == configs / "out" / "runs");
  CHECK(cfg->run.tasks_dir == tasks);
  SECTION("and absolute paths are kept") {
    auto text = run_ok + "root = \"/var/tmp/eat-runs\"\n";
    auto abs = eat::parse_config(text, test_file);
    REQUIRE(abs);
    CHECK(abs->run.root == fs::path{"/var/tmp/eat-runs"});
  }
  SECTION("run.workloads, absent by default, too") {
    CHECK(cfg->run.workloads.empty());
    auto text = run_ok + "workloads = \"../all.jsonl\"\n";
    auto given = eat::parse_config(text, test_file);
    REQUIRE(given);
    CHECK(given->run.workloads == fixtures / "all.jsonl");
    CHECK_THAT(failure(run_ok + "workloads = \"\"\n"),
      Catch::Contains("run.workloads: expected a non-empty string"));
  }
}

TEST_CASE("an unknown key names its position and the known keys") {
  CHECK(failure("[run]\ntask = \"tiny_gemm\"\nsed = 3\ntasks_dir = "
                "\"../tasks\"\n")
        == message(3, 1,
          "unknown key 'run.sed' (known keys in [run]: name, root, "
          "task, tasks_dir, workloads, seed, max_evaluations, max_wall_s, "
          "target_speedup, target_sol_fraction, mode, token_budget)"));
  CHECK_THAT(failure(run_ok + "[timing]\nwarm_up = 3\n"),
    Catch::Contains(":5:1: unknown key 'timing.warm_up' (known keys "
                    "in [timing]: warmup, min_samples"));
  CHECK_THAT(failure("seed = 3\n" + run_ok),
    Catch::Contains(":1:1: unknown key 'seed' outside any section"));
}

TEST_CASE("an unknown section names the known sections") {
  auto known = "(known sections: " + known_sections + ")";
  CHECK(failure(run_ok + "[agent]\nstrategy = \"local\"\n")
        == message(4, 1, "unknown section [agent] " + known));
  CHECK_THAT(failure(run_ok + "[agents.magic]\nurl = \"x\"\n"),
             Catch::Contains("unknown key 'agents.magic' (known keys in "
                             "[agents]: backend, builtin, cli, http)"));
  CHECK(failure(run_ok + "[devices]\nquantum = 1\n")
        == message(
          5, 1, "unknown key 'devices.quantum' outside any section " + known));
  CHECK_THAT(failure("run = 5\n"),
    Catch::StartsWith(
      message(1, 1, "run: expected a table (a section), got 5")));
}

TEST_CASE("a value of the wrong type names the key, the expectation and "
          "what was found") {
  auto text = run_ok + "name = \"x\"\nroot = \"r\"\nmax_wall_s = 5\n"
              + "seed = \"abc\"\n";
  CHECK(failure(text)
        == message(7, 1,
          "run.seed: expected a non-negative integer, got "
          "string \"abc\""));
  CHECK_THAT(failure(run_ok + "max_evaluations = 2.5\n"),
    Catch::Contains("run.max_evaluations: expected an integer in [1, "
                    "1000000], got float 2.5"));
  CHECK_THAT(failure(run_ok + "max_wall_s = true\n"),
    Catch::Contains(
      "run.max_wall_s: expected a number of seconds in (0, 1e8], got "
      "boolean true"));
  CHECK_THAT(failure(run_ok + "[devices.cpu]\nflags = \"-O3\"\n"),
    Catch::Contains(":5:1: devices.cpu.flags: expected an array of "
                    "a non-empty string, got string \"-O3\""));
  CHECK_THAT(failure(run_ok + "[devices.cpu]\nflags = [\"-O3\", 2]\n"),
    Catch::Contains(":5:17: devices.cpu.flags[1]: expected a "
                    "non-empty string, got 2"));
  CHECK_THAT(failure(run_ok + "[devices.cpu]\ncompiler = [\"g++\"]\n"),
    Catch::Contains("devices.cpu.compiler: expected a non-empty "
                    "string, got an array"));
}

TEST_CASE("devices.cpu.cores lists one distinct core per slot") {
  CHECK(failure(run_ok + "[devices.cpu]\nslots = 2\ncores = [3]\n")
        == message(6, 1,
          "devices.cpu.cores: expected one core per slot (2 "
          "slots), got 1 cores"));
  CHECK(failure(run_ok + "[devices.cpu]\nslots = 2\ncores = [3, 3]\n")
        == message(6, 1, "devices.cpu.cores: core 3 is listed twice"));
  CHECK(failure(run_ok + "[devices.cpu]\ncores = [-1]\n")
        == message(5, 10,
          "devices.cpu.cores[0]: expected an integer in [0, "
          "65535], got -1"));
  auto cfg
    = eat::parse_config(run_ok + "[devices.cpu]\ncores = []\n", test_file);
  REQUIRE(cfg);
  CHECK(cfg->cpu_cores.empty());
}

TEST_CASE("run.task is required") {
  CHECK(failure("[run]\nseed = 3\n")
        == message(1, 1, "run.task: required key is missing"));
  CHECK(failure("[supervisor]\nteams = 2\n")
        == "invalid_config: " + test_file.string()
             + ": run.task: required key is missing");
  CHECK_THAT(failure("[run]\ntask = \"../tiny_gemm\"\n"),
    Catch::Contains(":2:1: run.task: expected a task name"));
}

TEST_CASE("a task missing from the tasks directory names the expected file") {
  auto dir = tasks.lexically_normal();
  CHECK(failure("[run]\ntask = \"foo\"\ntasks_dir = \"../tasks\"\n")
        == message(2, 1,
          "run.task: no task 'foo' in tasks directory '" + dir.string()
            + "' (expected '" + (dir / "foo" / "task.toml").string()
            + "'); tasks there: tiny_gemm"));
  auto missing = (configs / "no-such-dir").lexically_normal();
  CHECK(failure("[run]\ntask = \"foo\"\ntasks_dir = \"no-such-dir\"\n")
        == message(3, 1,
          "run.tasks_dir: tasks directory '" + missing.string()
            + "' does not exist or is not a directory"));
}

TEST_CASE("text_only checks skip the task's existence, not the text") {
  // eat resume re-reads a run's configuration from its log; the run's task
  // is in the log too, so the tasks directory need not exist any more.
  auto text = "[run]\ntask = \"foo\"\ntasks_dir = \"no-such-dir\"\n"s;
  auto cfg = eat::parse_config(text, test_file, eat::config_checks::text_only);
  REQUIRE(cfg);
  CHECK(cfg->run.task == "foo");
  auto bad = eat::parse_config(text + "seed = -1\n", test_file,
                               eat::config_checks::text_only);
  CHECK_FALSE(bad);
}

TEST_CASE("a missing or unreadable configuration file gives the reason") {
  auto absent = configs / "absent.toml";
  auto cfg = eat::load_config(absent);
  REQUIRE_FALSE(cfg);
  CHECK(eat::code_of(cfg.error()) == eat::error::invalid_config);
  CHECK(eat::render(cfg.error())
        == "invalid_config: cannot read config file '" + absent.string()
             + "': No such file or directory");
  auto dir = eat::load_config(configs);
  REQUIRE_FALSE(dir);
  CHECK(eat::render(dir.error())
        == "invalid_config: cannot read config file '" + configs.string()
             + "': a directory, not a file");
}

TEST_CASE("a named pipe or a device given as the configuration file is "
          "refused at once, never waited on") {
  // Opening a named pipe without O_NONBLOCK waits for a writer: eat hung.
  eat::test::temp_dir dir;
  auto fifo = dir.path() / "config.toml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto piped = eat::load_config(fifo);
  REQUIRE_FALSE(piped);
  CHECK(eat::render(piped.error())
        == "invalid_config: cannot read config file '" + fifo.string()
             + "': a named pipe, not a regular file");
  auto device = eat::load_config("/dev/zero");
  REQUIRE_FALSE(device);
  CHECK(eat::render(device.error())
        == "invalid_config: cannot read config file '/dev/zero': a device, "
           "not a regular file");
}

TEST_CASE("a TOML syntax error gives toml++'s description and position") {
  CHECK(failure(run_ok + "[timing\nwarmup = 1\n")
        == message(4, 8,
          "TOML syntax error: Error while parsing table "
          "header: expected ']', saw '\\n'"));
  CHECK_THAT(failure(run_ok + "seed = 3\nseed = 4\n"),
    Catch::Contains(":5:8: TOML syntax error: ") && Catch::Contains("'seed'"));
}

TEST_CASE("every problem of a file is reported at once, in file order") {
  auto text = "[timing]\nwarmup = -1\n[run]\nseed = \"x\"\n[agent]\n"s;
  auto file = test_file.string();
  CHECK(failure(text)
        == "invalid_config: " + file
             + ":2:1: timing.warmup: expected an integer in [0, 100000], got "
               "-1\n"
             + file + ":3:1: run.task: required key is missing\n" + file
             + ":4:1: run.seed: expected a non-negative integer, got string "
               "\"x\"\n"
             + file
             + ":5:1: unknown section [agent] (known sections: "
             + known_sections + ")");
}

TEST_CASE("a configuration needs at least one device") {
  CHECK_THAT(failure(run_ok + "[devices.cpu]\nslots = 0\n"),
             Catch::Contains("devices.cpu.slots = 0 leaves the run without "
                             "devices"));
  CHECK(eat::parse_config(run_ok + "[devices.cpu]\nslots = 0\n"
                                   "[devices.sim]\ncount = 2\n",
                          test_file, eat::config_checks::text_only));
}

TEST_CASE("the quickstart configuration loads with its documented values") {
  auto cfg = eat::load_config(source_dir / "configs" / "quickstart.toml");
  REQUIRE(cfg);
  CHECK(cfg->run.name == "quickstart");
  CHECK(cfg->run.task == "sgemm");
  CHECK(cfg->run.tasks_dir == (source_dir / "kernels").lexically_normal());
  CHECK(cfg->run.root == (source_dir / "runs").lexically_normal());
  CHECK(cfg->run.seed == 42);
  CHECK(cfg->run.max_evaluations == 32);
  CHECK(cfg->run.mode == "eat");
  CHECK(cfg->supervisor.teams == 2);
  CHECK(cfg->supervisor.plateau_window == 5);
  CHECK(cfg->supervisor.agents_per_team == 1);
  CHECK(cfg->builtin.strategy == "local");
  CHECK(cfg->timing.min_time_s == 0.2);
  CHECK(cfg->timing.max_time_s == 3);
  CHECK(cfg->timing.warmup == eat::devices::timing_options{}.warmup);
}

TEST_CASE("every shipped configuration loads, and its task with it") {
  size_t count = 0;
  for (const auto& entry : fs::directory_iterator(source_dir / "configs")) {
    if (entry.path().extension() != ".toml")
      continue;
    ++count;
    CAPTURE(entry.path().filename().string());
    auto cfg = eat::load_config(entry.path());
    REQUIRE(cfg);
    auto task = eat::load_task(cfg->run.tasks_dir, cfg->run.task,
      eat::task_overrides{cfg->run.workloads});
    INFO((task ? std::string{} : eat::render(task.error())));
    REQUIRE(task);
    if (entry.path().filename() == "gpu-decode.toml") {
      CHECK(task->backend == "cuda");
      CHECK(task->workloads.size() == 47);
    }
  }
  CHECK(count >= 4);
}

TEST_CASE("[agents.cli] home_paths, credentials and hidden_home_paths name "
          "paths inside the "
          "home, which each team copies and eat keeps in step") {
  const std::string cli
    = run_ok + "[agents]\nbackend = \"cli\"\n[agents.cli]\n";
  auto defaults = eat::parse_config(cli, test_file);
  REQUIRE(defaults);
  CHECK(defaults->cli.hidden_home_paths.front() == ".ssh/");
  auto fine = eat::parse_config(cli
                                  + "home_paths = [\".claude/\", \".x.json\"]\n"
                                    "credentials = [\".claude/a/b.json\"]\n"
                                    "hidden_home_paths = [\".vault\"]\n",
    test_file);
  REQUIRE(fine);
  CHECK(fine->cli.hidden_home_paths == std::vector<std::string>{".vault"});
  CHECK(
    fine->cli.home_paths == std::vector<std::string>{".claude/", ".x.json"});
  CHECK(fine->cli.credentials == std::vector<std::string>{".claude/a/b.json"});
  for (const auto* line : {"home_paths = [\"../etc/\"]",
         "home_paths = [\"/etc\"]", "home_paths = [\"a//b\"]",
         "credentials = [\".claude/../../x\"]", "credentials = [\"\"]",
         "credentials = [\"./x\"]", "hidden_home_paths = [\"../x\"]"}) {
    INFO(line);
    auto bad = eat::parse_config(cli + line + "\n", test_file);
    REQUIRE_FALSE(bad);
    CHECK_THAT(eat::render(bad.error()),
      Catch::Contains("expected a path relative to the home, without \".\" "
                      "or \"..\" parts"));
  }
}
