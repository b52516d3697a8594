// `eat compare CONFIG [--seeds N] [--modes LIST] [--out DIR]`: the same
// configuration in the eat, flat and single modes, with the same seeds and
// budgets, as `eat run` child processes; then a table of the results
// (runtime/compare.hpp, docs/supervisor.md).

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "devices/subprocess.hpp"
#include "runtime/cli.hpp"
#include "runtime/compare.hpp"
#include "runtime/config.hpp"

namespace eat {

namespace {

namespace fs = std::filesystem;

constexpr const char* compare_help
  = R"(usage: eat compare CONFIG [--seeds N] [--modes eat,flat,single] [--out DIR]

Runs CONFIG once per mode and seed, each as 'eat run CONFIG --mode M --seed S'
with the same budgets (run.max_evaluations, run.token_budget), seeds
run.seed, run.seed+1, ..., run.seed+N-1 (N defaults to 3), then prints the
geometric-mean speedup of each mode's best kernel (mean and standard
deviation over seeds), the tokens spent and the evaluations. Each run's
directory and output (.log, .err) are kept under DIR (default:
<run.root>/compare-<run.name>-<date>-<time>).
)";

std::vector<std::string> split_modes(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in{text};
  std::string mode;
  while (std::getline(in, mode, ','))
    if (!mode.empty())
      out.push_back(mode);
  return out;
}

std::string stamp() {
  auto now = std::chrono::system_clock::to_time_t(
    std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y%m%d-%H%M%S");
  return out.str();
}

/// Runs one `eat run` child and reads its result.
compare_run run_one(const std::string& config, const std::string& mode,
                    uint64_t seed, const fs::path& dir) {
  compare_run r;
  r.mode = mode;
  r.seed = seed;
  auto start = std::chrono::steady_clock::now();
  devices::process_spec spec;
  spec.argv = {fs::read_symlink("/proc/self/exe").string(), "run", config,
               "--mode", mode, "--seed", std::to_string(seed),
               "--run-dir", dir.string()};
  spec.files = {{1, dir.string() + ".log"}, {2, dir.string() + ".err"}};
  // Its agents may need eat's API keys.
  spec.keep_secrets = true;
  auto child = devices::child_process::spawn(spec);
  if (!child) {
    r.failure = render(child.error());
    return r;
  }
  child->wait_until(std::chrono::steady_clock::now() + std::chrono::hours{48});
  auto status = child->reap();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                            - start)
                .count();
  auto result = read_run_result(dir);
  if (!result) {
    r.failure = devices::to_string(status) + ": " + render(result.error());
    return r;
  }
  result->mode = mode;
  result->seconds = r.seconds;
  if (!status.exited || status.code != 0)
    result->failure = "eat run " + devices::to_string(status) + " (see "
                      + dir.string() + ".log)";
  return *result;
}

} // namespace

exit_code cmd_compare(const std::vector<std::string>& args, std::ostream& out) {
  auto parsed = parse_command(args,
    {"compare", compare_help, {"seeds", "modes", "out"}, {}, 1, 1,
      "exactly one CONFIG file"},
    out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  auto fail = [&](const caf::error& err) { return report(out, err); };
  auto cfg = load_config(a.positional[0]);
  if (!cfg)
    return fail(cfg.error());
  auto seeds = positive_option(a, "seeds", 3);
  if (!seeds)
    return fail(seeds.error());
  auto modes = split_modes(a.options.count("modes") > 0 ? a.options["modes"]
                                                        : "eat,flat,single");
  for (const auto& m : modes)
    if (m != "eat" && m != "flat" && m != "single")
      return usage_error(out, "--modes: unknown mode '" + m + "'", "compare");
  fs::path root = a.options.count("out") > 0
                    ? fs::path{a.options["out"]}
                    : cfg->run.root / ("compare-" + cfg->run.name + "-" + stamp());
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec)
    return fail(make_error(error::io_failure, "cannot create " + root.string()
                                                + ": " + ec.message()));
  auto config = fs::absolute(a.positional[0]).string();
  std::vector<compare_run> runs;
  auto total = *seeds * modes.size();
  for (uint64_t i = 0; i < *seeds; ++i)
    for (const auto& mode : modes) {
      auto seed = cfg->run.seed + i;
      auto dir = root / (mode + "-s" + std::to_string(seed));
      out << "compare: [" << runs.size() + 1 << "/" << total << "] " << mode
          << ", seed " << seed << " ..." << std::flush;
      auto r = run_one(config, mode, seed, dir);
      if (r.task.empty())
        r.task = cfg->run.task;
      char line[160];
      std::snprintf(line, sizeof(line), " %.2fx, %llu tokens, %.0f s\n",
                    r.best_speedup, static_cast<unsigned long long>(r.tokens),
                    r.seconds);
      out << (r.failure.empty() ? std::string{line}
                                : " failed: " + r.failure + "\n");
      runs.push_back(std::move(r));
    }
  out << "\n" << format_table(summarize_runs(runs)) << "runs in "
      << root.string() << "\n";
  for (const auto& r : runs)
    if (!r.failure.empty())
      return exit_code::failed;
  return exit_code::ok;
}

} // namespace eat
