#include "runtime/config.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "actors/protocol/error.hpp"
#include "devices/gpu_device.hpp"
#include "runtime/task_file.hpp"
#include "runtime/toml_check.hpp"

namespace fs = std::filesystem;

namespace eat {

namespace {

using toml_check::max_integer;
using toml_check::number_rule;
using toml_check::problems;
using toml_check::string_rule;
using toml_check::table_reader;

/// Config files larger than this are refused (they are a few KiB).
constexpr size_t max_config_bytes = 1 << 20;

/// Largest size in MiB for map_size_mib and address_space_mib (16 TiB).
constexpr uint64_t max_mib = uint64_t{1} << 24;

constexpr number_rule positive{"a number > 0", [](double x) {
                                 return x > 0;
                               }};
constexpr number_rule non_negative{"a number >= 0", [](double x) {
                                     return x >= 0;
                                   }};
/// Durations in seconds: beyond ~9.2e9 s a deadline in nanoseconds wraps
/// (a timeout of 1e308 s stopped an agent after 1 s).
constexpr double max_seconds = 1e8;
constexpr number_rule seconds{"a number of seconds in (0, 1e8]", [](double x) {
                                return x > 0 && x <= max_seconds;
                              }};
constexpr number_rule seconds_or_zero{
  "a number of seconds in [0, 1e8]", [](double x) {
    return x >= 0 && x <= max_seconds;
  }};
constexpr number_rule at_least_one{"a number >= 1", [](double x) {
                                     return x >= 1;
                                   }};
constexpr number_rule open_unit{"a number in (0, 1)", [](double x) {
                                  return x > 0 && x < 1;
                                }};
/// The sim device's relative spread: at 0.5 its lower bounds reach 0 (a
/// noise of 1e308 gave negative times and intervals).
constexpr number_rule sim_noise{"a number in [0, 0.5)", [](double x) {
                                  return x >= 0 && x < 0.5;
                                }};

constexpr string_rule any_text{"a string", [](std::string_view) {
                                 return true;
                               }};
constexpr string_rule non_empty{"a non-empty string", [](std::string_view x) {
                                  return !x.empty();
                                }};
/// A path under the home: relative, without "." or ".." parts.
constexpr string_rule home_relative{
  "a path relative to the home, without \".\" or \"..\" parts",
  [](std::string_view x) {
    if (x.empty() || x.front() == '/')
      return false;
    for (size_t at = 0; at <= x.size();) {
      auto end = std::min(x.find('/', at), x.size());
      auto part = x.substr(at, end - at);
      if (part == "." || part == ".." || (part.empty() && end < x.size() - 1))
        return false;
      at = end + 1;
    }
    return true;
  }};
constexpr string_rule run_name{
  "a string of 1 to 64 characters from [A-Za-z0-9_-]", [](std::string_view x) {
    return !x.empty() && x.size() <= 64
           && std::all_of(x.begin(), x.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_'
                       || c == '-';
              });
  }};
constexpr string_rule task_name{
  "a task name (up to 64 letters, digits, '_', '-' and '.', not starting "
  "with '.')",
  [](std::string_view x) {
    return valid_task_name(x);
  }};
constexpr string_rule strategy_name{
  "one of \"local\", \"explore\", \"random\", \"crossover\"",
  [](std::string_view x) {
    return x == "local" || x == "explore" || x == "random" || x == "crossover";
  }};
constexpr string_rule mode_name{
  "one of \"eat\", \"flat\", \"single\"", [](std::string_view x) {
    return x == "eat" || x == "flat" || x == "single";
  }};
constexpr string_rule policy_name{
  "one of \"heuristic\", \"llm\"", [](std::string_view x) {
    return x == "heuristic" || x == "llm";
  }};
constexpr string_rule backend_name{
  "one of \"builtin\", \"cli\", \"http\"", [](std::string_view x) {
    return x == "builtin" || x == "cli" || x == "http";
  }};
constexpr string_rule preset_name{
  "one of \"claude\", \"codex\", \"gemini\", \"aider\", \"custom\"",
  [](std::string_view x) {
    return x == "claude" || x == "codex" || x == "gemini" || x == "aider"
           || x == "custom";
  }};
constexpr string_rule api_name{
  "one of \"openai\", \"anthropic\"", [](std::string_view x) {
    return x == "openai" || x == "anthropic";
  }};

// -- layout ------------------------------------------------------------------

const std::vector<std::string> known_sections
  = {"run",         "supervisor",  "supervisor.llm", "agents",
     "agents.builtin", "agents.cli", "agents.http", "devices.cpu",
     "devices.cuda", "devices.hip", "devices.sim", "devices.pool", "timing",
     "store"};

std::string known_sections_text() {
  std::vector<std::string> names;
  for (const auto& x : known_sections)
    names.push_back("[" + x + "]");
  return "known sections: " + toml_check::join(names, ", ");
}

/// Reports keys and tables outside the known sections.
/// `keys_allowed`: `table` is itself a section, whose plain keys its own
/// reader checks.
void check_layout(const toml::table& table, const std::string& prefix,
                  problems& out, bool keys_allowed = false) {
  for (auto&& [key, node] : table) {
    // The plain keys and unknown tables of a section are its reader's.
    auto path_of = prefix + "." + std::string{key.str()};
    auto known_below = std::any_of(
      known_sections.begin(), known_sections.end(), [&](const auto& x) {
        return x == path_of || x.rfind(path_of + ".", 0) == 0;
      });
    if (keys_allowed && !known_below)
      continue;
    auto path = prefix.empty() ? std::string{key.str()}
                               : prefix + "." + std::string{key.str()};
    auto is_section
      = std::find(known_sections.begin(), known_sections.end(), path)
        != known_sections.end();
    auto is_parent = std::any_of(
      known_sections.begin(), known_sections.end(), [&](const std::string& x) {
        return x.rfind(path + ".", 0) == 0;
      });
    if (is_section || is_parent) {
      if (!node.is_table())
        out.add(key.source(), path + ": expected a table (a section), got "
                                + toml_check::describe(node));
      else if (is_parent)
        check_layout(*node.as_table(), path, out, is_section);
    } else if (node.is_table()) {
      out.add(node.source(),
        "unknown section [" + path + "] (" + known_sections_text() + ")");
    } else {
      out.add(key.source(), "unknown key '" + path + "' outside any section ("
                              + known_sections_text() + ")");
    }
  }
}

/// A reader for one known section, checking its keys.
table_reader section(const toml::table& root, const std::string& name,
  std::vector<std::string_view> keys, problems& out) {
  return {root.at_path(name).as_table(), name, "[" + name + "]",
    std::move(keys), out};
}

// -- [run] -------------------------------------------------------------------

/// Resolves a relative path against the config file's directory.
fs::path resolve(const fs::path& base, const fs::path& p) {
  return (p.is_absolute() ? p : base / p).lexically_normal();
}

/// Reports a missing tasks directory or task file.
void check_task_exists(
  table_reader& s, const fs::path& tasks_dir, const std::string& task) {
  std::error_code ec;
  if (!fs::is_directory(tasks_dir, ec)) {
    s.fail(s.has("tasks_dir") ? "tasks_dir" : "task",
      "tasks directory '" + tasks_dir.string()
        + "' does not exist or is not a directory");
    return;
  }
  auto file = tasks_dir / task / "task.toml";
  if (fs::is_regular_file(file, ec))
    return;
  auto what = "no task '" + task + "' in tasks directory '" + tasks_dir.string()
              + "' (expected '" + file.string() + "')";
  if (auto names = list_tasks(tasks_dir); names && !names->empty())
    what += "; tasks there: " + toml_check::join(*names, ", ");
  s.fail("task", std::move(what));
}

run_section read_run(table_reader s, const fs::path& base,
                     config_checks checks) {
  run_section r;
  r.name = s.string("name", run_name).value_or(r.name);
  auto root = s.string("root", non_empty);
  r.root = resolve(base, root.value_or(r.root.string()));
  auto tasks_dir = s.string("tasks_dir", non_empty);
  r.tasks_dir = resolve(base, tasks_dir.value_or(r.tasks_dir.string()));
  if (auto workloads = s.string("workloads", non_empty))
    r.workloads = resolve(base, *workloads);
  r.seed = s.integer("seed", 0, max_integer).value_or(r.seed);
  r.max_evaluations
    = s.integer("max_evaluations", 1, 1000000).value_or(r.max_evaluations);
  r.max_wall_s = s.number("max_wall_s", seconds).value_or(r.max_wall_s);
  r.target_speedup
    = s.number("target_speedup", non_negative).value_or(r.target_speedup);
  r.target_sol_fraction = s.number("target_sol_fraction", non_negative)
                            .value_or(r.target_sol_fraction);
  r.mode = s.string("mode", mode_name).value_or(r.mode);
  r.token_budget
    = s.integer("token_budget", 0, max_integer).value_or(r.token_budget);
  if (!s.require("task"))
    return r;
  if (auto task = s.string("task", task_name)) {
    r.task = *task;
    if (checks == config_checks::all && (tasks_dir || !s.has("tasks_dir")))
      check_task_exists(s, r.tasks_dir, r.task);
  }
  return r;
}

// -- the other sections
// --------------------------------------------------------

supervisor_section read_supervisor(table_reader s) {
  supervisor_section r;
  r.teams = s.integer("teams", 1, 64).value_or(r.teams);
  r.agents_per_team
    = s.integer("agents_per_team", 1, 64).value_or(r.agents_per_team);
  r.plateau_window
    = s.integer("plateau_window", 0, 100000).value_or(r.plateau_window);
  r.plateau_threshold
    = s.number("plateau_threshold", open_unit).value_or(r.plateau_threshold);
  r.policy = s.string("policy", policy_name).value_or(r.policy);
  r.max_teams = s.integer("max_teams", 1, 64).value_or(r.max_teams);
  r.max_restarts = s.integer("max_restarts", 0, 1000).value_or(r.max_restarts);
  if (r.max_teams < r.teams)
    s.fail("max_teams", "supervisor.max_teams ("
                          + std::to_string(r.max_teams)
                          + ") must be >= supervisor.teams ("
                          + std::to_string(r.teams) + ")");
  return r;
}

cli_agent_section read_cli(table_reader s, const fs::path& base) {
  cli_agent_section r;
  r.preset = s.string("preset", preset_name).value_or(r.preset);
  r.program = s.string("program", non_empty).value_or(r.program);
  r.args = s.strings("args", any_text).value_or(r.args);
  r.output_format = s.string("output_format", any_text).value_or("");
  r.prompt_input = s.string("prompt_input", any_text).value_or("");
  if (auto dir = s.string("work_dir", non_empty))
    r.work_dir = *dir;
  if (auto dir = s.string("prompts_dir", non_empty))
    r.prompts_dir = resolve(base, *dir);
  r.env_allow = s.strings("env_allow", non_empty).value_or(r.env_allow);
  r.allowed_paths
    = s.strings("allowed_paths", non_empty).value_or(r.allowed_paths);
  r.role = s.string("role", non_empty).value_or(r.role);
  r.timeout_s = s.number("timeout_s", seconds).value_or(r.timeout_s);
  r.idle_timeout_s
    = s.number("idle_timeout_s", seconds).value_or(r.idle_timeout_s);
  r.kill_grace_s = s.number("kill_grace_s", seconds).value_or(r.kill_grace_s);
  r.max_turns = s.integer("max_turns", 1, 10000).value_or(r.max_turns);
  r.retries = s.integer("retries", 0, 100).value_or(r.retries);
  r.retry_base_s
    = s.number("retry_base_s", seconds_or_zero).value_or(r.retry_base_s);
  r.eval_timeout_s
    = s.number("eval_timeout_s", seconds).value_or(r.eval_timeout_s);
  r.max_evals = s.integer("max_evals", 0, 100000).value_or(r.max_evals);
  r.namespaces = s.boolean("namespaces").value_or(r.namespaces);
  r.home_paths = s.strings("home_paths", home_relative).value_or(r.home_paths);
  r.credentials
    = s.strings("credentials", home_relative).value_or(r.credentials);
  r.hidden_home_paths = s.strings("hidden_home_paths", home_relative)
                          .value_or(r.hidden_home_paths);
  if (r.preset == "custom" && r.args.empty() && s.has("preset"))
    s.fail("args", "preset \"custom\" needs args (the command line, as an "
                   "array)");
  return r;
}

http_agent_section read_http(table_reader s, const fs::path& base) {
  http_agent_section r;
  r.api = s.string("api", api_name).value_or(r.api);
  r.base_url = s.string("base_url", non_empty).value_or(r.base_url);
  r.model = s.string("model", non_empty).value_or(r.model);
  r.api_key_env = s.string("api_key_env", any_text).value_or(r.api_key_env);
  r.max_tokens = s.integer("max_tokens", 1, 10000000).value_or(r.max_tokens);
  r.max_completion_tokens
    = s.boolean("max_completion_tokens").value_or(r.max_completion_tokens);
  r.temperature = s.number("temperature", non_negative).value_or(r.temperature);
  r.stream = s.boolean("stream").value_or(r.stream);
  r.timeout_s = s.number("timeout_s", seconds).value_or(r.timeout_s);
  r.connect_timeout_s
    = s.number("connect_timeout_s", seconds).value_or(r.connect_timeout_s);
  r.idle_timeout_s
    = s.number("idle_timeout_s", seconds).value_or(r.idle_timeout_s);
  r.attempts = s.integer("attempts", 1, 100).value_or(r.attempts);
  r.retry_base_s
    = s.number("retry_base_s", seconds_or_zero).value_or(r.retry_base_s);
  r.retry_max_s = s.number("retry_max_s", seconds).value_or(r.retry_max_s);
  r.history_rows
    = s.integer("history_rows", 0, 100000).value_or(r.history_rows);
  r.min_output_tokens = s.integer("min_output_tokens", 1, 10000000)
                          .value_or(r.min_output_tokens);
  r.price_input = s.number("price_input", non_negative).value_or(0);
  r.price_cache_read = s.number("price_cache_read", non_negative).value_or(0);
  r.price_cache_write = s.number("price_cache_write", non_negative).value_or(0);
  r.price_output = s.number("price_output", non_negative).value_or(0);
  if (auto dir = s.string("prompts_dir", non_empty))
    r.prompts_dir = resolve(base, *dir);
  return r;
}

gpu_section read_gpu(table_reader s) {
  gpu_section r;
  r.enabled = s.boolean("enabled").value_or(r.enabled);
  if (auto gpus = s.integers("gpus", 0, 1023))
    r.gpus.assign(gpus->begin(), gpus->end());
  r.compiler = s.string("compiler", non_empty).value_or(r.compiler);
  r.flags = s.strings("flags", non_empty).value_or(r.flags);
  r.compile_timeout_s
    = s.number("compile_timeout_s", seconds).value_or(r.compile_timeout_s);
  r.eval_timeout_s
    = s.number("eval_timeout_s", seconds).value_or(r.eval_timeout_s);
  r.run_as = s.string("run_as", any_text).value_or(r.run_as);
  r.user_namespace = s.boolean("user_namespace").value_or(r.user_namespace);
  r.only_its_gpu = s.boolean("only_its_gpu").value_or(r.only_its_gpu);
  return r;
}

pool_section read_pool(table_reader s) {
  pool_section r;
  r.compile_workers
    = s.integer("compile_workers", 0, 256).value_or(r.compile_workers);
  r.ahead = s.integer("ahead", 0, 64).value_or(r.ahead);
  r.slice_timeout_s
    = s.number("slice_timeout_s", seconds).value_or(r.slice_timeout_s);
  r.drain_after = s.integer("drain_after", 1, 1000).value_or(r.drain_after);
  r.reverify_factor
    = s.number("reverify_factor", at_least_one).value_or(r.reverify_factor);
  r.reverify_baseline = s.number("reverify_baseline", at_least_one)
                          .value_or(r.reverify_baseline);
  r.reverify_tolerance = s.number("reverify_tolerance", at_least_one)
                           .value_or(r.reverify_tolerance);
  r.reverify_tolerance_cpu = s.number("reverify_tolerance_cpu", at_least_one)
                               .value_or(r.reverify_tolerance_cpu);
  return r;
}

sim_section read_sim(table_reader s) {
  sim_section r;
  r.count = s.integer("count", 0, 4096).value_or(r.count);
  r.compile_s = s.number("compile_s", seconds_or_zero).value_or(r.compile_s);
  r.run_s = s.number("run_s", seconds_or_zero).value_or(r.run_s);
  r.noise = s.number("noise", sim_noise).value_or(r.noise);
  r.peak_speedup = s.number("peak_speedup", positive).value_or(r.peak_speedup);
  r.fail_health_after = s.integer("fail_health_after", 0, max_integer)
                          .value_or(r.fail_health_after);
  return r;
}

planner_section read_planner(table_reader s) {
  planner_section r;
  r.api = s.string("api", api_name).value_or(r.api);
  r.base_url = s.string("base_url", non_empty).value_or(r.base_url);
  r.model = s.string("model", non_empty).value_or(r.model);
  r.api_key_env = s.string("api_key_env", any_text).value_or(r.api_key_env);
  r.timeout_s = s.number("timeout_s", seconds).value_or(r.timeout_s);
  r.max_tokens = s.integer("max_tokens", 1, 1000000).value_or(r.max_tokens);
  return r;
}

builtin_agent_section read_builtin(table_reader s) {
  builtin_agent_section r;
  r.strategy = s.string("strategy", strategy_name).value_or(r.strategy);
  r.tokens_per_proposal = s.integer("tokens_per_proposal", 0, max_integer)
                            .value_or(r.tokens_per_proposal);
  r.explore_rounds
    = s.integer("explore_rounds", 0, 1000).value_or(r.explore_rounds);
  return r;
}

store_section read_store(table_reader s) {
  store_section r;
  r.map_size_mib
    = s.integer("map_size_mib", 1, max_mib).value_or(r.map_size_mib);
  return r;
}

devices::timing_options read_timing(table_reader s) {
  devices::timing_options r;
  r.warmup = s.integer("warmup", 0, 100000).value_or(r.warmup);
  r.min_samples = s.integer("min_samples", 1, 1000000).value_or(r.min_samples);
  r.min_time_s = s.number("min_time_s", seconds_or_zero).value_or(r.min_time_s);
  r.max_time_s = s.number("max_time_s", seconds).value_or(r.max_time_s);
  r.max_rel_se = s.number("max_rel_se", open_unit).value_or(r.max_rel_se);
  r.check_seeds = s.integer("check_seeds", 1, 1000).value_or(r.check_seeds);
  r.reference_samples
    = s.integer("reference_samples", 0, 1000).value_or(r.reference_samples);
  if (r.max_time_s < r.min_time_s) {
    auto key = s.has("max_time_s") ? "max_time_s" : "min_time_s";
    s.fail(key, "timing.max_time_s (" + toml_check::format_number(r.max_time_s)
                  + ") must be >= timing.min_time_s ("
                  + toml_check::format_number(r.min_time_s) + ")");
  }
  return r;
}

/// What [devices.cpu] sets.
struct cpu_settings {
  devices::cpu_options options;
  uint32_t slots = 1;
  std::vector<int> cores;
};

std::vector<int> read_cores(table_reader& s, uint32_t slots) {
  auto cores = s.integers("cores", 0, 65535);
  if (!cores || cores->empty())
    return {};
  std::set<uint64_t> seen;
  for (auto core : *cores)
    if (!seen.insert(core).second) {
      s.fail("cores", "core " + std::to_string(core) + " is listed twice");
      return {};
    }
  if (cores->size() != slots) {
    s.fail("cores", "expected one core per slot (" + std::to_string(slots)
                      + " slots), got " + std::to_string(cores->size())
                      + " cores");
    return {};
  }
  return {cores->begin(), cores->end()};
}

cpu_settings read_cpu(table_reader s) {
  cpu_settings r;
  auto& o = r.options;
  r.slots = s.integer("slots", 0, 256).value_or(r.slots);
  r.cores = read_cores(s, r.slots);
  o.compiler = s.string("compiler", non_empty).value_or(o.compiler);
  o.flags = s.strings("flags", non_empty).value_or(o.flags);
  o.compile_timeout_s
    = s.number("compile_timeout_s", seconds).value_or(o.compile_timeout_s);
  o.eval_timeout_s
    = s.number("eval_timeout_s", seconds).value_or(o.eval_timeout_s);
  o.address_space_mib
    = s.integer("address_space_mib", 64, max_mib).value_or(o.address_space_mib);
  o.run_as = s.string("run_as", any_text).value_or(o.run_as);
  o.kernel_processes
    = s.boolean("kernel_processes").value_or(o.kernel_processes);
  return r;
}

/// Reads every section of `root`, recording problems in `out`.
config read_sections(const toml::table& root, const fs::path& file,
                     config_checks checks, problems& out) {
  check_layout(root, "", out);
  std::error_code ec;
  auto base = fs::absolute(file, ec).parent_path();
  config cfg;
  cfg.run = read_run(section(root, "run",
                       {"name", "root", "task", "tasks_dir", "workloads", "seed",
                         "max_evaluations", "max_wall_s", "target_speedup",
                         "target_sol_fraction", "mode", "token_budget"},
                       out),
    base, checks);
  cfg.supervisor = read_supervisor(
    section(root, "supervisor",
      {"teams", "agents_per_team", "plateau_window", "plateau_threshold",
        "policy", "max_teams", "max_restarts", "llm"},
      out));
  cfg.planner = read_planner(section(root, "supervisor.llm",
    {"api", "base_url", "model", "api_key_env", "timeout_s", "max_tokens"},
    out));
  if (cfg.supervisor.policy == "llm" && cfg.planner.model.empty())
    out.add({}, "supervisor.policy = \"llm\" needs [supervisor.llm] model");
  cfg.agent_backend = section(root, "agents", {"backend", "builtin", "cli",
                                               "http"}, out)
                        .string("backend", backend_name)
                        .value_or(cfg.agent_backend);
  cfg.cli = read_cli(
    section(root, "agents.cli",
      {"preset", "program", "args", "output_format", "prompt_input", "work_dir",
        "prompts_dir", "env_allow", "allowed_paths", "role", "timeout_s",
        "idle_timeout_s", "kill_grace_s", "max_turns", "retries",
        "retry_base_s", "eval_timeout_s", "max_evals", "namespaces",
        "home_paths", "credentials", "hidden_home_paths"},
      out),
    base);
  cfg.http = read_http(section(root, "agents.http",
    {"api", "base_url", "model", "api_key_env", "max_tokens",
      "max_completion_tokens", "temperature", "stream", "timeout_s",
      "connect_timeout_s", "idle_timeout_s", "attempts", "retry_base_s",
      "retry_max_s", "history_rows", "min_output_tokens", "price_input", "price_cache_read", "price_cache_write", "price_output",
      "prompts_dir"},
    out), base);
  if (cfg.agent_backend == "http" && cfg.http.model.empty())
    out.add({}, "agents.backend = \"http\" needs [agents.http] model");
  cfg.builtin = read_builtin(section(root, "agents.builtin",
    {"strategy", "tokens_per_proposal", "explore_rounds"}, out));
  cfg.store = read_store(section(root, "store", {"map_size_mib"}, out));
  auto cpu_section = section(root, "devices.cpu",
    {"slots", "cores", "compiler", "flags", "compile_timeout_s",
      "eval_timeout_s", "address_space_mib", "run_as", "kernel_processes"},
    out);
  auto cpu = read_cpu(cpu_section);
  cfg.cpu_slots = cpu.slots;
  cfg.cpu_cores = std::move(cpu.cores);
  cfg.cpu = std::move(cpu.options);
  // A model's or a CLI agent's kernels are untrusted code: unless the
  // section says otherwise, each runs in a confined process of its own.
  if (cfg.agent_backend != "builtin" && !cpu_section.has("kernel_processes"))
    cfg.cpu.kernel_processes = true;
  for (auto [name, gpu] : {std::pair{"devices.cuda", &cfg.cuda},
                           std::pair{"devices.hip", &cfg.hip}})
    *gpu = read_gpu(section(root, name,
      {"enabled", "gpus", "compiler", "flags", "compile_timeout_s",
        "eval_timeout_s", "run_as", "user_namespace", "only_its_gpu"},
      out));
  cfg.pool = read_pool(section(root, "devices.pool",
    {"compile_workers", "ahead", "slice_timeout_s", "drain_after",
      "reverify_factor", "reverify_baseline", "reverify_tolerance",
      "reverify_tolerance_cpu"},
    out));
  cfg.sim = read_sim(section(root, "devices.sim",
    {"count", "compile_s", "run_s", "noise", "peak_speedup",
      "fail_health_after"},
    out));
  if (cfg.cpu_slots == 0 && cfg.sim.count == 0 && !cfg.cuda.enabled
      && !cfg.hip.enabled)
    out.add({}, "devices.cpu.slots = 0 leaves the run without devices "
                "(enable [devices.cuda], [devices.hip] or [devices.sim])");
  auto timing = section(root, "timing",
    {"warmup", "min_samples", "min_time_s", "max_time_s", "max_rel_se",
      "check_seeds", "reference_samples"},
    out);
  cfg.timing = read_timing(timing);
  cfg.max_rel_se_set = timing.has("max_rel_se");
  cfg.cpu.timing = cfg.timing;
  return cfg;
}

} // namespace

caf::expected<config> parse_config(
  std::string_view text, const fs::path& file, config_checks checks) {
  auto root = toml_check::parse(text, file, error::invalid_config);
  if (!root)
    return root.error();
  problems out{file.string()};
  auto cfg = read_sections(*root, file, checks, out);
  if (!out.empty())
    return out.to_error(error::invalid_config);
  cfg.file = file;
  cfg.text = std::string{text};
  return cfg;
}

devices::timing_options gpu_timing(const config& cfg) {
  auto timing = cfg.timing;
  if (!cfg.max_rel_se_set)
    timing.max_rel_se = devices::gpu_options{}.timing.max_rel_se;
  return timing;
}

caf::expected<config> load_config(const fs::path& file) {
  auto contents = toml_check::read_file(file, max_config_bytes);
  if (!contents.ok)
    return make_error(error::invalid_config,
      "cannot read config file '" + file.string() + "': " + contents.why);
  return parse_config(contents.text, file);
}

} // namespace eat
