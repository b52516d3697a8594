// `eat run CONFIG [--run-dir DIR]`: starts a run.

#include <filesystem>
#include <iostream>
#include <map>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "devices/subprocess.hpp"
#include "runtime/agent_setup.hpp"
#include "runtime/cli.hpp"
#include "runtime/config_override.hpp"
#include "runtime/printable.hpp"
#include "runtime/run_loader.hpp"
#include "runtime/session.hpp"
#include "runtime/task_file.hpp"

namespace eat {

namespace {

constexpr const char* run_help
  = R"(usage: eat run CONFIG [--run-dir DIR] [--mode eat|flat|single] [--seed N]

Starts a run from the TOML configuration CONFIG (keys: docs/config.md) in a
new run directory, <run.root>/<run.name>-<date>-<time> unless --run-dir
names one. --mode and --seed override run.mode and run.seed (the run's log
keeps the configuration with the override, so a resume uses it too):
eat restructures teams on plateaus, flat puts all agents in one team,
single runs one agent (docs/supervisor.md). Prints a line per evaluation
and ends with the best speedup, the number of candidates tried and where
the best kernel's source is.
Interrupt with Ctrl-C (or kill it); 'eat resume RUN_DIR' continues.
)";

run_started start_event(
  const config& cfg, const run_dir& dir, const task_spec& task) {
  run_started s;
  s.run_id = dir.id();
  s.task = task.name;
  s.seed = cfg.run.seed;
  s.max_evaluations = cfg.run.max_evaluations;
  s.config_toml = cfg.text;
  s.config_path = std::filesystem::absolute(cfg.file).string();
  s.spec = task;
  return s;
}

/// `cfg` with --mode and --seed applied to its text, validated again.
caf::expected<config> with_overrides(const config& cfg, const parsed_args& a) {
  std::map<std::string, std::string> values;
  if (auto i = a.options.find("mode"); i != a.options.end()) {
    if (i->second != "eat" && i->second != "flat" && i->second != "single")
      return make_error(error::invalid_arguments,
                        "--mode: expected eat, flat or single, got '"
                          + i->second + "'");
    values["mode"] = "\"" + i->second + "\"";
  }
  if (a.options.count("seed") > 0) {
    auto seed = integer_option(a, "seed", 1, 0);
    if (!seed)
      return seed.error();
    values["seed"] = std::to_string(*seed);
  }
  auto text = with_run_keys(cfg.text, values);
  if (!text)
    return text.error();
  return parse_config(*text, cfg.file);
}

/// Refuses a configuration with no device for `task`'s backend (nor a sim
/// device, which takes any task), before a run directory is made: every
/// candidate would be rejected.
caf::expected<void> check_task_devices(
  const config& cfg, const task_spec& task) {
  const auto& b = task.backend;
  if (cfg.sim.count > 0 || (b == "cpu" && cfg.cpu_slots > 0)
      || (b == "cuda" && cfg.cuda.enabled) || (b == "hip" && cfg.hip.enabled))
    return {};
  auto why = "task " + task.name + " runs on " + b
             + " only, and the configuration makes no " + b + " device";
  if (b == "cuda" || b == "hip")
    why += " (set enabled = true in [devices." + b + "])";
  else if (b == "cpu")
    why += " ([devices.cpu] slots = 0)";
  return make_error(error::invalid_config, why);
}

/// Refuses a CPU device whose compiler cannot run (`<compiler> --version`),
/// before a run directory is made: the devices are set up after it, and
/// the run directory was left behind, unusable.
caf::expected<void> check_cpu_compiler(const config& cfg) {
  if (cfg.cpu_slots == 0)
    return {};
  const auto& program = cfg.cpu.compiler;
  auto probe = devices::run_captured({program, "--version"}, "", 30);
  if (!probe)
    return make_error(
      error::invalid_config, "devices.cpu.compiler: cannot run '" + program
                               + "': " + render(probe.error()));
  if (probe->timed_out || !probe->status.exited || probe->status.code != 0)
    return make_error(error::invalid_config,
      "devices.cpu.compiler: '" + program + " --version' "
        + (probe->timed_out ? std::string{"timed out after 30 s"}
                            : devices::to_string(probe->status)));
  return {};
}

/// The task, once everything that can be checked before the run directory
/// exists has been: the task file, the agents, the devices for the task
/// and the CPU compiler. All of their errors come back at once (one per
/// line, the first one's code), so that one attempt shows every mistake.
caf::expected<task_spec> preflight(const config& cfg) {
  std::vector<caf::error> errors;
  auto task = load_task(
    cfg.run.tasks_dir, cfg.run.task, task_overrides{cfg.run.workloads});
  if (!task)
    errors.push_back(task.error());
  if (auto ok = check_agent_backend(cfg); !ok)
    errors.push_back(ok.error());
  if (task)
    if (auto ok = check_task_devices(cfg, *task); !ok)
      errors.push_back(ok.error());
  if (auto ok = check_cpu_compiler(cfg); !ok)
    errors.push_back(ok.error());
  if (errors.empty())
    return task;
  if (errors.size() == 1)
    return errors.front();
  // Later lines name their code only when it differs from the first's.
  auto code = code_of(errors.front());
  auto prefix = to_string(code) + ": ";
  std::string text;
  for (const auto& e : errors) {
    auto line = render(e);
    if (line.rfind(prefix, 0) == 0)
      line.erase(0, prefix.size());
    text += (text.empty() ? "" : "\n") + line;
  }
  return make_error(code, std::move(text));
}

} // namespace

exit_code cmd_run(const std::vector<std::string>& args, std::ostream& console) {
  // What agents wrote reaches the terminal only as printable text.
  printable_buffer buffer{console.rdbuf()};
  std::ostream out{&buffer};
  auto parsed = parse_command(args,
    {"run", run_help, {"run-dir", "mode", "seed"}, {}, 1, 1,
      "exactly one CONFIG file"},
    out);
  if (auto* code = std::get_if<exit_code>(&parsed))
    return *code;
  auto& a = std::get<parsed_args>(parsed);
  auto fail = [&](const caf::error& err) { return report(out, err); };
  if (auto m = a.options.find("mode");
      m != a.options.end() && m->second != "eat" && m->second != "flat"
      && m->second != "single")
    return usage_error(out,
                       "--mode: expected eat, flat or single, got '"
                         + m->second + "'",
                       "run");
  auto cfg = load_config(a.positional[0]);
  if (cfg && (a.options.count("mode") > 0 || a.options.count("seed") > 0))
    cfg = with_overrides(*cfg, a);
  if (!cfg)
    return fail(cfg.error());
  auto task = preflight(*cfg);
  if (!task)
    return fail(task.error());
  auto dir = run_dir::create(
    cfg->run.root, cfg->run.name, cfg->text, a.options["run-dir"]);
  if (!dir)
    return fail(dir.error());
  auto store = open_run_store(dir->store_dir(), cfg->store.map_size_mib, false);
  if (!store)
    return fail(store.error());
  auto writer = open_run_writer(**store);
  if (!writer)
    return fail(writer.error());
  auto seq = commit_event(**writer, event_kind::run_started,
                          wire::encode(start_event(*cfg, *dir, *task)),
                          {{"/config.toml", cfg->text, "operator"}});
  if (!seq)
    return fail(seq.error());
  return run_session(*dir, {*cfg, *task, *store, *writer}, out);
}

} // namespace eat
