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
  /// A workloads JSONL file used instead of the task's own (a definition
  /// task only); empty for the task's own.
  std::filesystem::path workloads;
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
  /// "eat" (teams restructured on plateaus), "flat" (all agents in one team,
  /// no restructuring) or "single" (one agent); see docs/supervisor.md.
  std::string mode = "eat";
  /// Tokens the whole run may spend; 0 for no limit.
  uint64_t token_budget = 0;
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
  /// Restructuring policy: "heuristic" or "llm".
  std::string policy = "heuristic";
  /// Most teams active at once (restructurings may spawn teams).
  uint32_t max_teams = 4;
  /// Restarts of a crashed team before it is retired.
  uint32_t max_restarts = 3;
};

/// The [supervisor.llm] section: the model the llm policy asks.
struct planner_section {
  /// "openai" (/v1/chat/completions) or "anthropic" (/v1/messages).
  std::string api = "openai";
  std::string base_url = "http://127.0.0.1:8000";
  std::string model;
  /// Environment variable holding the API key ("" for none).
  std::string api_key_env;
  double timeout_s = 120;
  uint64_t max_tokens = 4096;
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

/// The [agents.cli] section: external coding-agent CLIs (docs/agent-cli.md).
/// Empty strings and arrays keep the preset's choice.
struct cli_agent_section {
  std::string preset = "claude";
  std::string program;
  std::vector<std::string> args;
  std::string output_format;
  std::string prompt_input;
  /// Workspaces are created under this folder (relative: to the run
  /// directory); default <run dir>/workspaces.
  std::filesystem::path work_dir;
  /// Role prompts and rules (relative: to the configuration's folder);
  /// default: configs/prompts of the source tree.
  std::filesystem::path prompts_dir;
  std::vector<std::string> env_allow;
  std::vector<std::string> allowed_paths;
  std::string role = "implementer";
  double timeout_s = 1800;
  double idle_timeout_s = 300;
  double kill_grace_s = 5;
  uint32_t max_turns = 30;
  uint32_t retries = 3;
  double retry_base_s = 10;
  double eval_timeout_s = 1800;
  /// `./eval` calls per assignment (0: no limit).
  uint32_t max_evals = 20;
  /// Whether the CLI runs in PID and mount namespaces of its own
  /// (eat-keeper).
  bool namespaces = true;
  /// What the CLI may write of its home, where they exist (a copy of its
  /// team's own).
  std::vector<std::string> home_paths
    = {".claude/", ".claude.json", ".codex/", ".gemini/", ".aider/"};
  /// Login files given to the teams' copies and taken back when changed.
  std::vector<std::string> credentials = {".claude/.credentials.json",
    ".codex/auth.json", ".gemini/oauth_creds.json"};
  /// Paths of its home the CLI does not see, where they exist: the
  /// operator's keys and other tools' logins.
  std::vector<std::string> hidden_home_paths
    = {".ssh/", ".gnupg/", ".config/gh/", ".docker/", ".kube/", ".netrc",
      ".git-credentials", ".pgpass"};
};

/// The [agents.http] section: LLM servers (docs/agent-http.md).
struct http_agent_section {
  /// "openai" or "anthropic".
  std::string api = "openai";
  std::string base_url = "http://127.0.0.1:8000";
  std::string model;
  std::string api_key_env;
  uint64_t max_tokens = 8192;
  bool max_completion_tokens = false;
  /// Sampling temperature; negative: the server's default.
  double temperature = -1;
  bool stream = true;
  double timeout_s = 600;
  double connect_timeout_s = 10;
  double idle_timeout_s = 120;
  uint32_t attempts = 5;
  double retry_base_s = 1;
  /// Upper bound of any retry delay, also one the server asks for.
  double retry_max_s = 60;
  /// Latest history entries shown in the prompt.
  uint64_t history_rows = 20;
  /// No request when the token budget leaves fewer output tokens.
  uint64_t min_output_tokens = 1024;
  /// US dollars per million tokens, for the cost of each reply.
  double price_input = 0;
  double price_cache_read = 0;
  double price_cache_write = 0;
  double price_output = 0;
  /// Role prompts (relative: to the configuration's folder); empty: the
  /// built-in template.
  std::filesystem::path prompts_dir;
};

/// A [devices.cuda] or [devices.hip] section: the GPUs of one backend.
struct gpu_section {
  /// Make one device per GPU (off: the backend is not used).
  bool enabled = false;
  /// Runtime indices of the GPUs to use; empty: every GPU of the backend.
  std::vector<int> gpus;
  /// Device compiler ("" : nvcc or hipcc) and its flags.
  std::string compiler;
  std::vector<std::string> flags = {"-O3"};
  double compile_timeout_s = 120;
  double eval_timeout_s = 300;
  /// When eat runs as root: the user kernel code runs as ("" : root).
  std::string run_as = "nobody";
  /// When eat is not root: whether runners make a user namespace of their
  /// own (network and PID isolation; off for a runtime that fails in one).
  bool user_namespace = true;
  /// Whether each runner sees only its own GPU (docs/harness.md, "CUDA and
  /// HIP backends").
  bool only_its_gpu = true;
};

/// The [devices.pool] section: how the device pool schedules
/// (docs/harness.md, "Device pool").
struct pool_section {
  uint32_t compile_workers = 0;
  uint32_t ahead = 2;
  double slice_timeout_s = 900;
  uint32_t drain_after = 3;
  double reverify_factor = 3.0;
  double reverify_baseline = 10.0;
  double reverify_tolerance = 1.1;
  double reverify_tolerance_cpu = 1.25;
};

/// The [devices.sim] section: simulated devices (a timing model), for
/// testing the runtime at scale without compiling.
struct sim_section {
  /// Simulated devices to add; 0 for none.
  uint32_t count = 0;
  double compile_s = 0;
  double run_s = 0;
  double noise = 0.01;
  double peak_speedup = 3;
  uint64_t fail_health_after = 0;
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
  planner_section planner;
  /// [agents] backend: "builtin", "cli" or "http" (every team's agents).
  std::string agent_backend = "builtin";
  builtin_agent_section builtin;
  cli_agent_section cli;
  http_agent_section http;
  store_section store;
  gpu_section cuda;
  gpu_section hip;
  pool_section pool;
  sim_section sim;
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
  /// Whether [timing] sets max_rel_se (see gpu_timing).
  bool max_rel_se_set = false;
};

/// The timing options of the GPU devices: `cfg.timing`, but with the GPU's
/// own stopping rule (a relative standard error under 0.5 %,
/// BENCHMARK-PROTOCOL.md section 3) unless [timing] sets max_rel_se.
devices::timing_options gpu_timing(const config& cfg);

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
