// The configuration of a run: what to optimise, with how many teams and
// agents, on which devices and with which timing rules. Read from a TOML file
// (format and every key: docs/config.md) by the `eat` process at start-up and
// then handed around as a plain value; the run stores `text` in its log.
// Loading touches the file system (it checks that the task file exists) and
// is safe from any thread; the result may be copied freely.

#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "devices/options.hpp"

namespace eat {

/// The [run] section: identity, task and budget of a run.
struct run_section {
  /// Name of the run, [A-Za-z0-9_-], 1 to 64 characters.
  std::string name = "run";
  /// Directory under which run directories are created.
  std::filesystem::path root = "runs";
  /// Name of the task: a folder under `tasks_dir` holding a task.toml.
  std::string task;
  /// Directory holding one folder per task.
  std::filesystem::path tasks_dir = "kernels";
  /// Seed of every random choice the runtime makes.
  uint64_t seed = 1;
  /// Evaluations (benchmarked candidates) after which the run stops.
  uint64_t max_evaluations = 32;
  /// Wall-clock seconds after which the run stops.
  double max_wall_s = 3600;
  /// Geometric-mean speedup at which the run stops; 0 for none.
  double target_speedup = 0;
  /// Fraction of the speed of light, on every workload of the best kernel,
  /// at which the run stops; 0 for none.
  double target_sol_fraction = 0;
};

/// The [supervisor] section: how many teams, and how large.
struct supervisor_section {
  uint32_t teams = 1;
  uint32_t agents_per_team = 1;
  /// Evaluations without improvement after which a team is restructured;
  /// 0 turns plateau detection off.
  uint32_t plateau_window = 8;
  /// Relative gain over a team's best that counts as improvement.
  double plateau_threshold = 0.02;
};

/// The [agents.builtin] section: the embedded autotuning agent.
struct builtin_agent_section {
  /// Search strategy: "local", "explore" or "random".
  std::string strategy = "local";
  /// Tokens charged per proposal, so that budgets compare with LLM agents.
  uint64_t tokens_per_proposal = 1000;
  /// Passed candidates the "local" strategy collects by random sampling
  /// before it starts hill-climbing.
  uint32_t explore_rounds = 6;
};

/// The [store] section: the run's LMDB environment.
struct store_section {
  /// LMDB map size in MiB (address space reserved, not disk used).
  uint64_t map_size_mib = 65536;
};

/// A validated configuration. Every field holds its documented default unless
/// the file set it.
struct config {
  /// The file it was read from, as given by the caller.
  std::filesystem::path file;
  /// The full text of that file (stored in the run's log).
  std::string text;
  run_section run;
  supervisor_section supervisor;
  builtin_agent_section builtin;
  store_section store;
  /// [devices.cpu] slots: concurrent CPU evaluations.
  uint32_t cpu_slots = 1;
  /// [devices.cpu] cores: one core per slot; empty = the last online cores.
  std::vector<int> cpu_cores;
  /// [devices.cpu] compiler, flags, compile_timeout_s, eval_timeout_s and
  /// address_space_mib. `core`, `runner_path` and `work_dir` are filled by the
  /// runtime, not by the configuration; `cpu.timing` is a copy of `timing`.
  devices::cpu_options cpu;
  /// [timing] warmup, min_samples, min_time_s, max_time_s, max_rel_se and
  /// check_seeds.
  devices::timing_options timing;
};

/// What parse_config checks besides the text itself.
enum class config_checks {
  /// Also that the task file named by run.task exists (starting a run).
  all,
  /// Only the text (resuming a run, whose task is in its log).
  text_only,
};

/// Reads and validates a configuration file. Relative paths in it (run.root,
/// run.tasks_dir) are resolved against the file's directory. Fails with
/// error::invalid_config naming the file, and for each problem the key, what
/// was expected and its line:column (all problems at once, in file order).
caf::expected<config> load_config(const std::filesystem::path& file);

/// Same as load_config, from `text`; `file` is used in messages and for
/// resolving relative paths (it need not exist).
caf::expected<config> parse_config(std::string_view text,
                                   const std::filesystem::path& file,
                                   config_checks checks = config_checks::all);

} // namespace eat
