// Specification of the ranges of configuration values (runtime/config.hpp,
// docs/config.md): each key's range, and the message that names it.

#include "runtime/config.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "tests/runtime/config_fixtures.hpp"

namespace {

using eat::test::failure;
using eat::test::message;
using eat::test::run_ok;
using eat::test::test_file;

struct bad_value {
  std::string section;
  std::string key;
  std::string value;
  std::string expectation;
};

} // namespace

TEST_CASE("integers are accepted where seconds are expected") {
  auto cfg = eat::parse_config(run_ok + "max_wall_s = 60\n", test_file);
  REQUIRE(cfg);
  CHECK(cfg->run.max_wall_s == 60.0);
}

TEST_CASE("values out of range are rejected with the range") {
  auto x = GENERATE(values<bad_value>({
    {"run", "name", "\"\"",
      "a string of 1 to 64 characters from [A-Za-z0-9_-]"},
    {"run", "name", "\"a b\"", "a string of 1 to 64 characters"},
    {"run", "name", '"' + std::string(65, 'x') + '"', "a string of 1 to 64"},
    // A long value is shown cut (a 900,000-character name was echoed).
    {"run", "name", '"' + std::string(100000, 'x') + '"',
      "a string of 1 to 64 characters from [A-Za-z0-9_-], got string \""
        + std::string(200, 'x') + "\"... (100000 characters)"},
    {"run", "root", "\"\"", "a non-empty string"},
    {"run", "seed", "-1", "a non-negative integer, got -1"},
    {"run", "max_evaluations", "0", "an integer in [1, 1000000], got 0"},
    {"run", "max_evaluations", "1000001", "an integer in [1, 1000000]"},
    {"run", "max_wall_s", "0", "a number of seconds in (0, 1e8], got 0"},
    {"run", "max_wall_s", "inf",
      "a number of seconds in (0, 1e8], got float inf"},
    {"run", "max_wall_s", "nan",
      "a number of seconds in (0, 1e8], got float nan"},
    // Beyond ~9.2e9 s a deadline in nanoseconds wrapped: 1e308 s stopped
    // an agent after 1 s.
    {"agents.cli", "timeout_s", "1e308",
      "a number of seconds in (0, 1e8], got float 1e+308"},
    {"agents.cli", "max_evals", "-1", "an integer in [0, 100000], got -1"},
    {"agents.cli", "namespaces", "1", "a boolean, got 1"},
    {"run", "target_speedup", "-2", "a number >= 0"},
    {"run", "target_sol_fraction", "-0.5", "a number >= 0"},
    {"supervisor", "teams", "0", "an integer in [1, 64], got 0"},
    {"supervisor", "teams", "65", "an integer in [1, 64], got 65"},
    {"supervisor", "agents_per_team", "65", "an integer in [1, 64]"},
    {"supervisor", "plateau_window", "-1", "an integer in [0, 100000]"},
    {"supervisor", "plateau_threshold", "0", "a number in (0, 1), got 0"},
    {"supervisor", "plateau_threshold", "1.5", "a number in (0, 1)"},
    {"agents.builtin", "strategy", "\"greedy\"",
      "one of \"local\", \"explore\", \"random\", \"crossover\", got string "
      "\"greedy\""},
    {"agents.builtin", "tokens_per_proposal", "-5", "a non-negative integer"},
    {"agents.builtin", "explore_rounds", "1001", "an integer in [0, 1000]"},
    {"devices.cpu", "slots", "257", "an integer in [0, 256]"},
    {"devices.cpu", "compiler", "\"\"", "a non-empty string, got string \"\""},
    {"devices.cpu", "compile_timeout_s", "0",
      "a number of seconds in (0, 1e8]"},
    {"devices.cpu", "eval_timeout_s", "-1.5",
      "a number of seconds in (0, 1e8], got float -1.5"},
    {"devices.cpu", "address_space_mib", "63", "an integer in [64, 16777216]"},
    {"devices.cpu", "run_as", "0", "a string, got 0"},
    {"devices.cuda", "run_as", "1", "a string, got 1"},
    {"devices.hip", "user_namespace", "\"no\"", "a boolean, got string \"no\""},
    {"devices.cuda", "only_its_gpu", "1", "a boolean, got 1"},
    // Past 0.5 the sim device reported negative times and intervals.
    {"devices.sim", "noise", "1e308", "a number in [0, 0.5), got float"},
    {"devices.sim", "noise", "-0.1", "a number in [0, 0.5), got float -0.1"},
    {"timing", "warmup", "100001", "an integer in [0, 100000]"},
    {"timing", "min_samples", "0", "an integer in [1, 1000000]"},
    {"timing", "min_time_s", "-0.1",
      "a number of seconds in [0, 1e8], got float -0.1"},
    {"timing", "max_time_s", "0", "a number of seconds in (0, 1e8], got 0"},
    {"timing", "max_rel_se", "0", "a number in (0, 1), got 0"},
    {"timing", "max_rel_se", "1", "a number in (0, 1), got 1"},
    {"timing", "check_seeds", "0", "an integer in [1, 1000], got 0"},
    {"timing", "check_seeds", "1001", "an integer in [1, 1000]"},
    {"timing", "reference_samples", "-1", "an integer in [0, 1000], got -1"},
    {"timing", "reference_samples", "1001", "an integer in [0, 1000]"},
    {"store", "map_size_mib", "0", "an integer in [1, 16777216], got 0"},
    {"devices.pool", "reverify_factor", "0.5", "a number >= 1, got float 0.5"},
    {"devices.pool", "reverify_baseline", "0", "a number >= 1, got 0"},
    {"devices.pool", "reverify_tolerance", "0.9", "a number >= 1"},
    {"devices.pool", "reverify_tolerance_cpu", "-1", "a number >= 1, got -1"},
  }));
  INFO(x.section << "." << x.key << " = " << x.value);
  auto header = x.section == "run" ? "" : "[" + x.section + "]\n";
  auto line = x.section == "run" ? 4 : 5;
  auto text = run_ok + header + x.key + " = " + x.value + "\n";
  CHECK_THAT(
    failure(text), Catch::StartsWith(message(line, 1,
                     x.section + "." + x.key + ": expected " + x.expectation)));
}

TEST_CASE("timing.max_time_s may not be below timing.min_time_s") {
  CHECK(failure(run_ok + "[timing]\nmin_time_s = 4\nmax_time_s = 3\n")
        == message(6, 1,
          "timing.max_time_s: timing.max_time_s (3) must be "
          ">= timing.min_time_s (4)"));
  CHECK_THAT(failure(run_ok + "[timing]\nmin_time_s = 11\n"),
    Catch::Contains(":5:1: timing.min_time_s: timing.max_time_s (10) "
                    "must be >= timing.min_time_s (11)"));
}
