// Specification of the matched-budget comparison's table
// (runtime/compare.hpp).

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include <sys/wait.h>

#include "runtime/compare.hpp"
#include "tests/runtime/process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;

TEST_CASE("runs are grouped by task and mode with mean and spread over "
          "seeds") {
  std::vector<compare_run> runs{
    {"sgemm", "eat", 1, 10.0, 24000, 24, 40, ""},
    {"sgemm", "flat", 1, 8.0, 24000, 24, 40, ""},
    {"sgemm", "eat", 2, 12.0, 24000, 24, 40, ""},
    {"sgemm", "flat", 2, 8.0, 22000, 22, 40, ""},
    {"sgemm", "flat", 3, 0, 0, 0, 1, "eat run exited with status 1"},
  };
  auto rows = summarize_runs(runs);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].mode == "eat");
  CHECK(rows[0].runs == 2);
  CHECK(rows[0].mean_speedup == Approx(11.0));
  CHECK(rows[0].sd_speedup == Approx(1.41421356));
  CHECK(rows[1].mode == "flat");
  CHECK(rows[1].runs == 2);
  CHECK(rows[1].failed == 1);
  CHECK(rows[1].sd_speedup == 0);
  CHECK(rows[1].mean_tokens == 23000);
  auto table = format_table(rows);
  CHECK_THAT(table, Catch::Contains("sgemm"));
  CHECK_THAT(table, Catch::Contains("11.00x ± 1.41"));
  CHECK_THAT(table, Catch::Contains("(1 failed)"));
}

TEST_CASE("eat compare runs each mode with each seed and prints the table") {
  eat::test::temp_dir tmp;
  auto config = tmp.path() / "config.toml";
  std::ofstream{config}
    << "[run]\nname = \"compare-test\"\ntask = \"sgemm\"\n"
    << "tasks_dir = \"" << EAT_SOURCE_DIR << "/kernels\"\n"
    << "root = \"" << tmp.path().string() << "\"\nseed = 5\n"
    << "max_evaluations = 2\n[supervisor]\nteams = 2\n"
    << "[timing]\nwarmup = 1\nmin_samples = 3\nmin_time_s = 0.01\n"
    << "max_time_s = 0.2\ncheck_seeds = 2\n";
  auto out_dir = tmp.path() / "cmp";
  eat::test::child_process compare{
    EAT_BINARY,
    {"compare", config.string(), "--seeds", "1", "--modes", "eat,single",
     "--out", out_dir.string()}};
  std::string output;
  auto status = compare.finish(output);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(output, Catch::Contains("[1/2] eat, seed 5"));
  CHECK_THAT(output, Catch::Contains("[2/2] single, seed 5"));
  CHECK_THAT(output, Catch::Contains("sgemm                eat        1"));
  CHECK_THAT(output, Catch::Contains("sgemm                single     1"));
  auto eat_run = read_run_result(out_dir / "eat-s5");
  REQUIRE(eat_run);
  CHECK(eat_run->evaluations == 2);
  CHECK(eat_run->failure.empty());
  // The run's log keeps the configuration with the override.
  std::ifstream stored{out_dir / "single-s5" / "config.toml"};
  std::string text{std::istreambuf_iterator<char>{stored}, {}};
  CHECK_THAT(text, Catch::Contains("mode = \"single\""));
}

TEST_CASE("eat run refuses an unknown --mode") {
  eat::test::child_process run{EAT_BINARY,
                               {"run", "x.toml", "--mode", "swarm"}};
  std::string output;
  auto status = run.finish(output);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(output, Catch::Contains("--mode: expected eat, flat or single, "
                                     "got 'swarm'"));
}
