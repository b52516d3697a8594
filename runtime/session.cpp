#include "runtime/session.hpp"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <optional>
#include <thread>

#include <pthread.h>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/agent/run_registry.hpp"
#include "actors/device_pool.hpp"
#include "actors/store_server.hpp"
#include "actors/supervisor.hpp"
#include "devices/cpu_device.hpp"
#include "devices/gpu_device.hpp"
#include "devices/sim_device.hpp"
#include "runtime/agent_setup.hpp"
#include "runtime/paths.hpp"
#include "runtime/progress_printer.hpp"
#include "runtime/report.hpp"
#include "runtime/system_setup.hpp"

namespace eat {

namespace {

/// Waits for SIGINT/SIGTERM on its own thread and asks the supervisor to
/// stop; a second signal exits the process. SIGUSR2 ends the watcher.
class signal_watcher {
public:
  explicit signal_watcher(supervisor_actor sup)
    : thread_([sup] {
        watch(sup);
      }) {}
  ~signal_watcher() {
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
  }

  /// Blocks the signals in the calling thread (and threads it starts).
  static void block() {
    auto set = signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
  }

private:
  static sigset_t signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR2);
    return set;
  }

  static void watch(supervisor_actor sup) {
    auto set = signals();
    bool stopping = false;
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0 || sig == SIGUSR2)
        return;
      if (stopping)
        std::_Exit(static_cast<int>(exit_code::interrupted));
      stopping = true;
      caf::anon_send(sup, stop_atom_v,
        std::string{"interrupted by "}
          + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    }
  }

  std::thread thread_;
};

/// The cores of the CPU devices: [devices.cpu] cores, else the last ones.
std::vector<int> cpu_device_cores(const config& cfg) {
  auto cores = static_cast<int>(std::thread::hardware_concurrency());
  std::vector<int> out;
  for (uint32_t i = 0; i < cfg.cpu_slots; ++i)
    out.push_back(i < cfg.cpu_cores.size() ? cfg.cpu_cores[i]
                                           : std::max(cores - 1 - int(i), 0));
  return out;
}

/// Adds the GPUs of the enabled backends, their runners' host threads on a
/// core no CPU device times on where there is one (plan_cores); a backend
/// without a usable GPU is reported in `warnings` and the run goes on with
/// the other devices.
void add_gpu_devices(const config& cfg, const run_dir& dir,
                     std::vector<std::shared_ptr<devices::device>>& out,
                     std::string& warnings) {
  for (auto [name, gpu] : {std::pair{"cuda", &cfg.cuda},
                           std::pair{"hip", &cfg.hip}}) {
    if (!gpu->enabled)
      continue;
    devices::gpu_options opts;
    opts.compiler = gpu->compiler;
    opts.flags = gpu->flags;
    opts.compile_timeout_s = gpu->compile_timeout_s;
    opts.eval_timeout_s = gpu->eval_timeout_s;
    opts.run_as = gpu->run_as;
    opts.user_namespace = gpu->user_namespace;
    opts.only_its_gpu = gpu->only_its_gpu;
    opts.gpus = gpu->gpus;
    opts.runner_path
      = (executable_dir() / (std::string{"eat-"} + name + "-runner")).string();
    opts.work_dir = (dir.work_dir() / name).string();
    opts.timing = gpu_timing(cfg);
    opts.core = devices::plan_cores(cpu_device_cores(cfg), true).gpu_host;
    auto devs = devices::make_gpu_devices(name, opts);
    if (!devs) {
      warnings += std::string{"warning: no "} + name
                  + " device: " + render(devs.error())
                  + "; the run continues on the other devices\n";
      continue;
    }
    for (auto& d : *devs)
      out.emplace_back(std::move(d));
  }
}

caf::expected<std::vector<std::shared_ptr<devices::device>>> make_devices(
  const config& cfg, const run_dir& dir, std::string& warnings) {
  std::vector<std::shared_ptr<devices::device>> out;
  auto cores = cpu_device_cores(cfg);
  for (uint32_t i = 0; i < cfg.cpu_slots; ++i) {
    auto opts = cfg.cpu;
    opts.timing = cfg.timing;
    opts.core = cores[i];
    opts.runner_path = (executable_dir() / "eat-runner").string();
    opts.work_dir = dir.work_dir().string();
    auto dev = devices::make_cpu_device("cpu" + std::to_string(i), opts);
    if (!dev)
      return dev.error();
    out.emplace_back(std::move(*dev));
  }
  add_gpu_devices(cfg, dir, out, warnings);
  for (uint32_t i = 0; i < cfg.sim.count; ++i) {
    devices::sim_options sim;
    sim.compile_s = cfg.sim.compile_s;
    sim.run_s = cfg.sim.run_s;
    sim.noise = cfg.sim.noise;
    sim.peak_speedup = cfg.sim.peak_speedup;
    sim.fail_health_after = cfg.sim.fail_health_after;
    sim.seed = cfg.run.seed + i;
    out.emplace_back(devices::make_sim_device("sim" + std::to_string(i), sim));
  }
  return out;
}

/// Whether any of `devs` is a GPU (its runner's host thread takes a core).
bool has_gpu(const std::vector<std::shared_ptr<devices::device>>& devs) {
  return std::any_of(devs.begin(), devs.end(), [](const auto& d) {
    auto kind = d->caps().kind;
    return kind == "cuda" || kind == "hip";
  });
}

/// "pool of cpu0, cpu1": what evaluation_started events name as device.
std::string pool_name(const std::vector<std::shared_ptr<devices::device>>& devs) {
  std::string out = "pool of ";
  for (size_t i = 0; i < devs.size(); ++i)
    out += (i == 0 ? "" : ", ") + devs[i]->id();
  return out;
}

/// Why no device of `devs` can evaluate `task`, or "": the device pool
/// gives a task to the devices of its backend, or else to sim devices
/// (actors/device_pool.cpp), and rejects every candidate where there are
/// neither, which would spend the whole budget on rejections.
std::string no_device_for(const task_spec& task,
  const std::vector<std::shared_ptr<devices::device>>& devs) {
  std::string ids;
  for (const auto& d : devs) {
    if (auto kind = d->caps().kind; kind == task.backend || kind == "sim")
      return {};
    ids += (ids.empty() ? "" : ", ") + d->id();
  }
  auto why = "no " + task.backend + " device for task " + task.name
             + ", which runs on " + task.backend + " only (this run's devices: "
             + (ids.empty() ? "none" : ids) + ")";
  if (task.backend == "cuda" || task.backend == "hip")
    why += "; see the warning above, or enable [devices." + task.backend
           + "] in the configuration";
  return why;
}

/// The compile targets of the devices that evaluate `task` (those of its
/// backend), for the builtin tuner's constraints (docs/tasks.md).
std::vector<target_facts> targets_of(const task_spec& task,
  const std::vector<std::shared_ptr<devices::device>>& devs) {
  std::vector<target_facts> out;
  for (const auto& d : devs)
    if (auto caps = d->caps(); caps.kind == task.backend)
      out.push_back(std::move(caps.target));
  return out;
}

supervisor_options supervisor_options_of(
  const config& cfg, const task_spec& task, std::vector<target_facts> targets) {
  supervisor_options opts;
  opts.task = task;
  opts.seed = cfg.run.seed;
  opts.max_evaluations = cfg.run.max_evaluations;
  opts.max_wall_s = cfg.run.max_wall_s;
  opts.target_speedup = cfg.run.target_speedup;
  opts.target_sol_fraction = cfg.run.target_sol_fraction;
  opts.teams = cfg.supervisor.teams;
  opts.agents_per_team = cfg.supervisor.agents_per_team;
  opts.strategy = cfg.builtin.strategy;
  opts.agent.tuner.strategy = cfg.builtin.strategy;
  opts.agent.tuner.explore_rounds = cfg.builtin.explore_rounds;
  opts.agent.tuner.targets = std::move(targets);
  opts.agent.tokens_per_proposal = cfg.builtin.tokens_per_proposal;
  opts.plateau.window = cfg.supervisor.plateau_window;
  opts.plateau.threshold = cfg.supervisor.plateau_threshold;
  opts.token_budget = cfg.run.token_budget;
  opts.policy = cfg.supervisor.policy;
  opts.max_teams = cfg.supervisor.max_teams;
  opts.max_restarts = cfg.supervisor.max_restarts;
  opts.plan_timeout_s = cfg.planner.timeout_s;
  opts.agent_backend = backend_label(cfg);
  opts.agent_role = cfg.agent_backend == "cli" ? cfg.cli.role
                    : cfg.agent_backend == "http" ? "implementer"
                                                  : "tuner";
  // Matched-budget baselines (docs/supervisor.md): the same agents in one
  // team, or one agent, and no restructuring.
  if (cfg.run.mode == "flat") {
    opts.agents_per_team = cfg.supervisor.teams * cfg.supervisor.agents_per_team;
    opts.teams = 1;
    opts.restructure = false;
  } else if (cfg.run.mode == "single") {
    opts.teams = 1;
    opts.agents_per_team = 1;
    opts.restructure = false;
  }
  return opts;
}

void print_header(std::ostream& out, const run_dir& dir,
  const session_inputs& in,
  const std::vector<std::shared_ptr<devices::device>>& devs) {
  const auto& h = in.writer->history();
  out << "run " << dir.id() << ": task " << in.task.name << " ("
      << in.task.workloads.size() << " workloads), " << in.cfg.supervisor.teams
      << " team(s) x " << in.cfg.supervisor.agents_per_team << " "
      << in.cfg.agent_backend << " agent(s), ";
  if (in.cfg.agent_backend == "builtin")
    out << "strategy " << in.cfg.builtin.strategy << ", ";
  out << h.evaluations << " of " << in.cfg.run.max_evaluations
      << " evaluations done\n";
  for (const auto& d : devs)
    out << "device " << d->description() << "\n";
  out << "run directory: " << dir.path().string() << "\n" << std::flush;
}

exit_code finish(const run_dir& dir, const run_summary& s,
  const std::string& devices_text, std::ostream& out) {
  std::string best_path;
  if (!s.best_source.empty()) {
    std::ofstream file{dir.best_kernel(), std::ios::trunc};
    file << s.best_source;
    if (file.flush())
      best_path = dir.best_kernel().string();
  }
  out << final_report(s, best_path) << devices_text;
  if (s.reason.rfind("interrupted", 0) == 0) {
    out << "continue with: eat resume " << dir.path().string() << "\n";
    return exit_code::interrupted;
  }
  return exit_code::ok;
}

/// Enters the run's folder in the registry of eat's runs, and the cli
/// agents' workspaces where they lie outside it, so that the CLIs of eat's
/// other runs see neither (actors/agent/run_registry.hpp): an absolute
/// [agents.cli] work_dir lay open to them, ./eval sockets included (red
/// team). A workspace folder is made first: an entry of a folder that does
/// not exist is dropped.
void register_folders(
  const config& cfg, const run_dir& dir, std::ostream& out) {
  auto registry = run_registry_dir();
  if (!registry) {
    out << "warning: eat's user has no home for the registry of runs: the "
           "CLIs of eat's other runs may see this run's files\n";
    return;
  }
  std::vector<std::filesystem::path> folders{dir.path()};
  auto work = cli_work_dir(cfg, dir.path());
  auto rel = work.lexically_normal().lexically_relative(dir.path());
  if (cfg.agent_backend == "cli" && (rel.empty() || *rel.begin() == "..")) {
    std::error_code ec;
    std::filesystem::create_directories(work, ec);
    folders.push_back(work);
  }
  for (const auto& folder : folders)
    if (auto why = register_run(*registry, folder); !why.empty())
      out << "warning: " << why << ": the CLIs of eat's other runs may see "
          << folder.string() << "\n";
}

} // namespace

exit_code run_session(
  const run_dir& dir, session_inputs in, std::ostream& out) {
  signal_watcher::block();
  if (auto n = dir.remove_leftovers(); n > 0)
    out << "removed " << n << " unfinished build or evaluation "
        << (n == 1 ? "directory" : "directories")
        << " that a stopped process left in work/\n";
  register_folders(in.cfg, dir, out);
  std::string warnings;
  auto devs = make_devices(in.cfg, dir, warnings);
  out << warnings;
  if (!devs) {
    out << "eat: cannot set up the devices: " << render(devs.error()) << "\n";
    return exit_code_for(devs.error());
  }
  if (auto why = no_device_for(in.task, *devs); !why.empty()) {
    out << "eat: " << why << "\ncontinue with: eat resume "
        << dir.path().string() << " where there is one\n";
    return exit_code::failed;
  }
  print_header(out, dir, in, *devs);
  auto cores = devices::plan_cores(cpu_device_cores(in.cfg), has_gpu(*devs));
  // eat's own threads, and the coding-agent CLIs and compilers they start,
  // keep off the cores that time kernels (the runners pin themselves
  // there): a red team's CLI loaded the device's core, which slowed the
  // baseline's long calls more than a fast candidate's (1.3x reported for
  // the same code). eat-keeper keeps a CLI from moving back.
  devices::pinned_thread off_devices{cores.compile};
  if (!off_devices.error().empty())
    out << "eat: warning: cannot keep eat off the devices' cores: "
        << off_devices.error() << "\n";
  caf::actor_system_config sys_cfg;
  configure_actor_system(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto store = sys.spawn<caf::detached>(store_server, in.store, in.writer);
  const auto& history = in.writer->history();
  supervisor_links links;
  links.store = store;
  // One pool over every device: teams send it their evaluations as to a
  // device, and it gives each device exclusive slices (docs/harness.md).
  pool_options pool_opts;
  pool_opts.compile_workers = in.cfg.pool.compile_workers;
  pool_opts.compile_cores = cores.compile;
  pool_opts.ahead = in.cfg.pool.ahead;
  pool_opts.slice_timeout_s = in.cfg.pool.slice_timeout_s;
  pool_opts.drain_after = in.cfg.pool.drain_after;
  pool_opts.reverify_factor = in.cfg.pool.reverify_factor;
  pool_opts.reverify_baseline = in.cfg.pool.reverify_baseline;
  pool_opts.reverify_tolerance = in.cfg.pool.reverify_tolerance;
  pool_opts.reverify_tolerance_cpu = in.cfg.pool.reverify_tolerance_cpu;
  links.listener = sys.spawn(
    progress_printer, &out, history.evaluations, in.cfg.run.max_evaluations);
  pool_opts.listener = links.listener;
  auto pool = spawn_device_pool(sys, *devs, pool_opts);
  links.devices.push_back(pool);
  // Teams' shares of the devices follow their shares of the budgets.
  links.set_weight = [pool](const std::string& team, double weight) {
    caf::anon_send(pool, weight_atom_v, team, weight);
  };
  links.device_names.push_back(pool_name(*devs));
  // Set by the supervisor when the run stops or finishes: cli agents'
  // programs are stopped then instead of being waited for.
  auto halt = std::make_shared<std::atomic<bool>>(false);
  auto agents = make_agent_factory(
    in.cfg, in.task, {links.devices.front(), store, dir.path(), halt});
  auto planner = make_planner(sys, in.cfg);
  if (!agents || !planner) {
    auto err = agents ? planner.error() : agents.error();
    out << "eat: cannot set up the agents: " << render(err) << "\n";
    for (auto& d : links.devices)
      caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(links.listener, caf::exit_reason::user_shutdown);
    return exit_code_for(err);
  }
  links.make_agent = *agents;
  links.planner = *planner;
  auto sup_opts
    = supervisor_options_of(in.cfg, in.task, targets_of(in.task, *devs));
  sup_opts.halt = halt;
  auto sup = sys.spawn(supervisor, std::move(sup_opts), links, history);
  exit_code result = exit_code::failed;
  {
    signal_watcher watcher{sup};
    caf::scoped_actor self{sys};
    std::optional<run_summary> summary;
    self->request(sup, caf::infinite, run_atom_v)
      .receive(
        [&](run_summary& s) {
          summary = std::move(s);
        },
        [&](caf::error& err) {
          out << "eat: the run failed: " << render(err) << "\n";
        });
    std::string devices_text;
    self->request(pool, std::chrono::seconds{10}, status_atom_v)
      .receive(
        [&](pool_status& s) {
          devices_text = device_report(s);
        },
        [&](caf::error&) {});
    if (summary)
      result = finish(dir, *summary, devices_text, out);
  }
  for (auto& d : links.devices)
    caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(links.listener, caf::exit_reason::user_shutdown);
  return result;
}

} // namespace eat
