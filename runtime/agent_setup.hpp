// Making the run's agents and the llm planner from the configuration: the
// [agents] backend (builtin, cli, http) and [supervisor.llm]. Checks fail
// fast, before the run starts, with a message saying what is missing (a CLI
// program not in PATH, an LLM server that does not answer). Called by the
// session on the main thread; the factory it returns is called by the
// supervisor's actor.

#pragma once

#include <atomic>
#include <filesystem>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/supervisor.hpp"
#include "runtime/config.hpp"

namespace eat {

/// What the agents may reach.
struct agent_links {
  device_actor device;
  store_actor store;
  /// The run directory (cli workspaces go under it).
  std::filesystem::path run_dir;
  /// Set when the run is ending (supervisor_options::halt).
  std::shared_ptr<std::atomic<bool>> halt;
};

/// Where the cli agents' workspaces go: [agents.cli] work_dir, under
/// `run_dir` where it is relative, or `run_dir`/workspaces by default.
std::filesystem::path cli_work_dir(
  const config& cfg, const std::filesystem::path& run_dir);

/// Checks the configured backend and returns a factory of its agents.
caf::expected<agent_factory> make_agent_factory(const config& cfg,
                                                const task_spec& task,
                                                const agent_links& links);

/// Checks the configured backend before a run directory exists (cli
/// workspaces are checked under the system's temporary folder).
caf::expected<void> check_agent_backend(const config& cfg);

/// The planner of the llm policy, or a null handle for the heuristic one.
caf::expected<planner_actor> make_planner(caf::actor_system& sys,
                                          const config& cfg);

/// Name of the backend for agent_assigned events, e.g. "cli:claude".
std::string backend_label(const config& cfg);

} // namespace eat
