#include "runtime/session.hpp"

#include <csignal>
#include <fstream>
#include <thread>

#include <pthread.h>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/device_server.hpp"
#include "actors/store_server.hpp"
#include "actors/supervisor.hpp"
#include "devices/cpu_device.hpp"
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

caf::expected<std::vector<std::shared_ptr<devices::device>>> make_devices(
  const config& cfg, const run_dir& dir) {
  std::vector<std::shared_ptr<devices::device>> out;
  auto cores = static_cast<int>(std::thread::hardware_concurrency());
  for (uint32_t i = 0; i < cfg.cpu_slots; ++i) {
    auto opts = cfg.cpu;
    opts.timing = cfg.timing;
    opts.core = i < cfg.cpu_cores.size() ? cfg.cpu_cores[i]
                                         : std::max(cores - 1 - int(i), 0);
    opts.runner_path = (executable_dir() / "eat-runner").string();
    opts.work_dir = dir.work_dir().string();
    auto dev = devices::make_cpu_device("cpu" + std::to_string(i), opts);
    if (!dev)
      return dev.error();
    out.emplace_back(std::move(*dev));
  }
  return out;
}

supervisor_options supervisor_options_of(
  const config& cfg, const task_spec& task) {
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
  opts.agent.tokens_per_proposal = cfg.builtin.tokens_per_proposal;
  opts.plateau.window = cfg.supervisor.plateau_window;
  opts.plateau.threshold = cfg.supervisor.plateau_threshold;
  return opts;
}

void print_header(std::ostream& out, const run_dir& dir,
  const session_inputs& in,
  const std::vector<std::shared_ptr<devices::device>>& devs) {
  const auto& h = in.writer->history();
  out << "run " << dir.id() << ": task " << in.task.name << " ("
      << in.task.workloads.size() << " workloads), " << in.cfg.supervisor.teams
      << " team(s) x " << in.cfg.supervisor.agents_per_team
      << " builtin agent(s), strategy " << in.cfg.builtin.strategy << ", "
      << h.evaluations << " of " << in.cfg.run.max_evaluations
      << " evaluations done\n";
  for (const auto& d : devs)
    out << "device " << d->description() << "\n";
  out << "run directory: " << dir.path().string() << "\n" << std::flush;
}

exit_code finish(const run_dir& dir, const run_summary& s, std::ostream& out) {
  std::string best_path;
  if (!s.best_source.empty()) {
    std::ofstream file{dir.best_kernel(), std::ios::trunc};
    file << s.best_source;
    if (file.flush())
      best_path = dir.best_kernel().string();
  }
  out << final_report(s, best_path);
  if (s.reason.rfind("interrupted", 0) == 0) {
    out << "continue with: eat resume " << dir.path().string() << "\n";
    return exit_code::interrupted;
  }
  return exit_code::ok;
}

} // namespace

exit_code run_session(
  const run_dir& dir, session_inputs in, std::ostream& out) {
  signal_watcher::block();
  auto devs = make_devices(in.cfg, dir);
  if (!devs) {
    out << "eat: cannot set up the devices: " << render(devs.error()) << "\n";
    return exit_code_for(devs.error());
  }
  print_header(out, dir, in, *devs);
  caf::actor_system_config sys_cfg;
  configure_actor_system(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto store = sys.spawn<caf::detached>(store_server, in.store, in.writer);
  const auto& history = in.writer->history();
  supervisor_links links;
  links.store = store;
  for (auto& d : *devs) {
    links.devices.push_back(sys.spawn<caf::detached>(device_server, d));
    links.device_names.push_back(d->description());
  }
  links.listener = sys.spawn(
    progress_printer, &out, history.evaluations, in.cfg.run.max_evaluations);
  auto sup = sys.spawn(
    supervisor, supervisor_options_of(in.cfg, in.task), links, history);
  exit_code result = exit_code::failed;
  {
    signal_watcher watcher{sup};
    caf::scoped_actor self{sys};
    self->request(sup, caf::infinite, run_atom_v)
      .receive(
        [&](run_summary& s) {
          result = finish(dir, s, out);
        },
        [&](caf::error& err) {
          out << "eat: the run failed: " << render(err) << "\n";
        });
  }
  for (auto& d : links.devices)
    caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(links.listener, caf::exit_reason::user_shutdown);
  return result;
}

} // namespace eat
