#include "runtime/agent_setup.hpp"

#include <chrono>
#include <cstdlib>

#include "actors/agent/cli_agent.hpp"
#include "actors/agent/http_agent.hpp"
#include "actors/agent/run_registry.hpp"
#include "actors/protocol/error.hpp"
#include "runtime/paths.hpp"

namespace eat {

namespace {

namespace fs = std::filesystem;

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds{static_cast<int64_t>(seconds * 1000)};
}

fs::path default_prompts_dir() {
  std::error_code ec;
  if (fs::is_directory("configs/prompts", ec))
    return fs::absolute("configs/prompts");
  return fs::path{EAT_SOURCE_DIR} / "configs" / "prompts";
}

cli_agent_options cli_options(const config& cfg, const agent_links& links) {
  const auto& c = cfg.cli;
  cli_agent_options o;
  o.preset = c.preset;
  o.args = c.args;
  o.program = c.program;
  o.output_format = c.output_format;
  o.prompt_input = c.prompt_input;
  o.work_dir = cli_work_dir(cfg, links.run_dir);
  o.prompts_dir = c.prompts_dir.empty() ? default_prompts_dir() : c.prompts_dir;
  o.env_allow = c.env_allow;
  o.allowed_paths = c.allowed_paths;
  o.role = c.role;
  o.timeout_s = c.timeout_s;
  o.idle_timeout_s = c.idle_timeout_s;
  o.kill_grace_s = c.kill_grace_s;
  o.max_turns = c.max_turns;
  o.retries = c.retries;
  o.retry_base_s = c.retry_base_s;
  o.eval_timeout_s = c.eval_timeout_s;
  o.max_evals = c.max_evals;
  o.namespaces = c.namespaces;
  o.home_paths = c.home_paths;
  o.hidden_home_paths = c.hidden_home_paths;
  o.credentials = c.credentials;
  // What the CLI does not see: the other runs under the run root (a red
  // team's CLI read their teams' homes and used a live one's ./eval
  // socket). What it may read but not write: its run (its store, the
  // compile cache, the other workspaces), the tasks, eat's programs and
  // prompts.
  if (!cfg.run.root.empty())
    o.hidden.push_back(cfg.run.root);
  // Nor the runs made elsewhere (--run-dir): all of eat's runs enter their
  // folders in the registry (run_registry.hpp).
  o.run_registry = run_registry_dir();
  for (const auto& path : {links.run_dir, cfg.run.tasks_dir, executable_dir(),
         o.prompts_dir, o.work_dir})
    if (!path.empty())
      o.read_only.push_back(path);
  o.eat_program = fs::read_symlink("/proc/self/exe").string();
  o.keeper_program = (executable_dir() / "eat-keeper").string();
  o.device = links.device;
  o.store = links.store;
  o.halt = links.halt;
  return o;
}

caf::expected<http_agent_options> http_options(const http_agent_section& h) {
  http_agent_options o;
  auto style = parse_api_style(h.api);
  if (!style)
    return make_error(error::invalid_config,
                      "agents.http.api: unknown API '" + h.api + "'");
  o.style = *style;
  o.base_url = h.base_url;
  o.model = h.model;
  o.api_key_env = h.api_key_env;
  o.max_tokens = h.max_tokens;
  o.max_completion_tokens = h.max_completion_tokens;
  if (h.temperature >= 0)
    o.temperature = h.temperature;
  o.stream = h.stream;
  o.prices = {h.price_input, h.price_cache_read, h.price_cache_write,
              h.price_output};
  o.connect_timeout = millis(h.connect_timeout_s);
  o.timeout = millis(h.timeout_s);
  o.idle_timeout = millis(h.idle_timeout_s);
  o.retry.attempts = h.attempts;
  o.retry.base_delay = millis(h.retry_base_s);
  o.retry.max_delay = millis(h.retry_max_s);
  o.history_rows = h.history_rows;
  o.min_output_tokens = h.min_output_tokens;
  o.prompts_dir = h.prompts_dir;
  return o;
}

planner_actor::behavior_type http_planner(planner_actor::pointer,
                                          http_agent_options opts) {
  return {
    [opts](plan_atom, const std::string& prompt) -> caf::result<std::string> {
      auto text = complete_prompt(
        opts,
        "You are the supervisor of teams of agents that optimise a compute "
        "kernel. Answer with one JSON object.",
        prompt);
      if (!text)
        return text.error();
      return std::move(*text);
    },
  };
}

} // namespace

std::filesystem::path cli_work_dir(
  const config& cfg, const std::filesystem::path& run_dir) {
  const auto& w = cfg.cli.work_dir;
  return w.empty() ? run_dir / "workspaces" : w.is_absolute() ? w : run_dir / w;
}

caf::expected<planner_actor> make_planner(caf::actor_system& sys,
                                          const config& cfg) {
  if (cfg.supervisor.policy != "llm")
    return planner_actor{};
  http_agent_section h;
  h.api = cfg.planner.api;
  h.base_url = cfg.planner.base_url;
  h.model = cfg.planner.model;
  h.api_key_env = cfg.planner.api_key_env;
  h.max_tokens = cfg.planner.max_tokens;
  h.timeout_s = cfg.planner.timeout_s;
  h.stream = false;
  auto opts = http_options(h);
  if (!opts)
    return opts.error();
  if (auto ok = check_http_agent(*opts); !ok)
    return make_error(error::invalid_config,
                      "supervisor.llm: " + render(ok.error()));
  return sys.spawn<caf::detached>(http_planner, *opts);
}

std::string backend_label(const config& cfg) {
  if (cfg.agent_backend == "cli")
    return "cli:" + cfg.cli.preset;
  if (cfg.agent_backend == "http")
    return "http:" + cfg.http.api + ":" + cfg.http.model;
  return "builtin";
}

caf::expected<agent_factory> make_agent_factory(const config& cfg,
                                                const task_spec&,
                                                const agent_links& links) {
  if (cfg.agent_backend == "cli") {
    auto opts = cli_options(cfg, links);
    if (auto ok = check_cli_agent(opts); !ok)
      return ok.error();
    return agent_factory{[opts](caf::actor_system& sys, const std::string&,
                                const std::string&) -> agent_actor {
      return sys.spawn<caf::detached>(cli_agent, opts);
    }};
  }
  if (cfg.agent_backend == "http") {
    auto opts = http_options(cfg.http);
    if (!opts)
      return opts.error();
    if (auto ok = check_http_agent(*opts); !ok)
      return ok.error();
    opts->halt = links.halt;
    auto store = links.store;
    return agent_factory{[opts = *opts, store](caf::actor_system& sys,
                                               const std::string&,
                                               const std::string&) mutable
                         -> agent_actor {
      // Kernels written by agents (family "custom") are read back from the
      // run's store; templates and the baseline from the task.
      auto* system = &sys;
      opts.source_of = [system, store](const assignment& a) {
        return starting_kernel(*system, a, store);
      };
      return sys.spawn<caf::detached>(http_agent, opts);
    }};
  }
  return agent_factory{};
}

caf::expected<void> check_agent_backend(const config& cfg) {
  if (cfg.agent_backend == "builtin")
    return caf::unit;
  // Workspaces are checked in the system's temporary folder: the run
  // directory does not exist yet, and a failed check must leave nothing.
  // A folder of its own: at a fixed name, another program could have put
  // a link to elsewhere there (red team).
  auto probe = (fs::temp_directory_path() / "eat-agent-check.XXXXXX").string();
  if (::mkdtemp(probe.data()) == nullptr)
    return make_error(error::io_failure,
      "cannot make a folder to check the agents in: " + probe);
  auto factory = make_agent_factory(cfg, {}, {{}, {}, probe});
  std::error_code ec;
  fs::remove_all(probe, ec);
  if (!factory)
    return factory.error();
  return caf::unit;
}

} // namespace eat
