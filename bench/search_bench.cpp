// search_bench: the matched-budget comparison of Evolving Agent Teams on
// every CPU task. For each task it writes a configuration (2 teams of 1
// builtin agent, the same evaluation and token budgets in every mode) and
// runs `eat compare CONFIG --seeds N`, which runs the eat, flat and single
// modes with the same seeds; then it prints one table with every task and
// whether eat mode's mean geomean speedup beats flat and single on each.
//
//   cmake --build BUILD_DIR --target search_bench eat
//   BUILD_DIR/bench/search_bench [--seeds N] [--evaluations N] [--tasks a,b]
//                                [--eat PATH] [--keep DIR]
//
// --keep DIR keeps each task's `eat compare` output (every run's log and
// run directory) under DIR/compare-TASK instead of a scratch directory that
// is removed at the end.
//
// docs/performance.md ("search_bench") records the figures.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

struct settings {
  /// The eat program (a copy keeps the bench independent of rebuilds).
  std::string eat = EAT_BINARY;
  int seeds = 3;
  int evaluations = 20;
  std::vector<std::string> tasks{"sgemm", "rmsnorm_h4096", "softmax"};
  /// Where the compare outputs are kept; empty: the scratch directory.
  std::string keep;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in{text};
  std::string x;
  while (std::getline(in, x, ','))
    if (!x.empty())
      out.push_back(x);
  return out;
}

settings parse(int argc, char** argv) {
  settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--seeds")
      s.seeds = std::atoi(argv[i + 1]);
    else if (flag == "--evaluations")
      s.evaluations = std::atoi(argv[i + 1]);
    else if (flag == "--tasks")
      s.tasks = split(argv[i + 1]);
    else if (flag == "--eat")
      s.eat = argv[i + 1];
    else if (flag == "--keep")
      s.keep = argv[i + 1];
  }
  return s;
}

std::string config_text(const std::string& task, const settings& s,
                        const fs::path& root) {
  std::ostringstream out;
  out << "[run]\nname = \"search-" << task << "\"\nroot = \""
      << root.string() << "\"\ntask = \"" << task << "\"\ntasks_dir = \""
      << (fs::path{EAT_SOURCE_DIR} / "kernels").string()
      << "\"\nseed = 1\nmax_evaluations = " << s.evaluations
      << "\ntoken_budget = " << s.evaluations * 1000
      << "\n\n[supervisor]\nteams = 2\nagents_per_team = 1\n"
         "plateau_window = 4\nmax_teams = 4\n\n"
         "[agents.builtin]\nstrategy = \"local\"\ntokens_per_proposal = 1000\n"
         "explore_rounds = 4\n\n"
         "[timing]\nwarmup = 3\nmin_samples = 5\nmin_time_s = 0.05\n"
         "max_time_s = 0.5\nmax_rel_se = 0.02\ncheck_seeds = 2\n";
  return out.str();
}

/// Runs `eat compare` and returns its output.
std::string run_compare(const fs::path& config, const settings& s,
                        const fs::path& out_dir) {
  auto command = s.eat + " compare " + config.string()
                 + " --seeds " + std::to_string(s.seeds) + " --out "
                 + out_dir.string() + " 2>&1";
  std::string output;
  if (auto* pipe = ::popen(command.c_str(), "r")) {
    char buf[4096];
    while (auto n = std::fread(buf, 1, sizeof(buf), pipe)) {
      std::fwrite(buf, 1, n, stdout);
      std::fflush(stdout);
      output.append(buf, n);
    }
    ::pclose(pipe);
  }
  return output;
}

/// The mean speedup of `mode` in a compare table, or -1.
double mean_of(const std::string& table, const std::string& task,
               const std::string& mode) {
  std::istringstream in{table};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words{line};
    std::string t, m;
    size_t runs = 0;
    double mean = 0;
    if (words >> t >> m >> runs >> mean && t == task && m == mode)
      return mean;
  }
  return -1;
}

} // namespace

int main(int argc, char** argv) {
  auto s = parse(argc, argv);
  eat::test::temp_dir scratch;
  std::printf("search_bench: %zu tasks x 3 modes x %d seeds, %d evaluations "
              "and %d tokens per run\n\n",
              s.tasks.size(), s.seeds, s.evaluations, s.evaluations * 1000);
  std::string summary;
  int wins = 0;
  for (const auto& task : s.tasks) {
    auto config = scratch.path() / (task + ".toml");
    std::ofstream{config} << config_text(task, s, scratch.path() / "runs");
    auto out_root = s.keep.empty() ? scratch.path() : fs::path{s.keep};
    auto out = run_compare(config, s, out_root / ("compare-" + task));
    auto eat = mean_of(out, task, "eat");
    auto flat = mean_of(out, task, "flat");
    auto single = mean_of(out, task, "single");
    auto beats = eat > flat && eat > single;
    wins += beats ? 1 : 0;
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%-16s eat %7.2fx  flat %7.2fx  single %7.2fx  eat/flat "
                  "%.3f  eat/single %.3f  %s\n",
                  task.c_str(), eat, flat, single, flat > 0 ? eat / flat : 0,
                  single > 0 ? eat / single : 0,
                  beats ? "eat best" : "eat NOT best");
    summary += line;
  }
  std::printf("\n== search_bench summary (mean geomean speedup over %d "
              "seeds) ==\n%sgoal: eat mode beats flat and single on every "
              "task: %d of %zu\n",
              s.seeds, summary.c_str(), wins, s.tasks.size());
  return 0;
}
