// What a coding-agent CLI sees of the machine (docs/agent-cli.md): the
// mounts eat-keeper makes for each attempt, read-only but for the CLI's
// own temporary folders, its team's home copies and its workspace, with
// the run root, eat's other runs (run_registry.hpp) and the other
// workspaces hidden.

#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "actors/agent/cli_agent.hpp"
#include "actors/agent/cli_process.hpp"

namespace eat {

/// eat's home, where it is an absolute path other than "/".
std::optional<std::filesystem::path> eat_home();

/// Whether a CLI runs in a mount namespace of eat-keeper's making.
bool gets_mounts(const cli_agent_options& opts);

/// What a CLI may write: nothing but temporary folders of its own, its
/// team's copies of the `home_paths` of its home (cli_home.hpp) and its
/// workspace, none of `opts.read_only` (the run directory, ...), and the
/// other workspaces are hidden (their ./eval sockets took another team's
/// kernels: red team).
std::vector<cli_mount> cli_mounts(const cli_agent_options& opts,
  const std::filesystem::path& workspace,
  const std::filesystem::path& team_home, const std::filesystem::path& program);

} // namespace eat
