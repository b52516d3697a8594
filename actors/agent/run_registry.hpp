// The runs of eat's user, wherever they lie: a CLI sees none but its own.
//
// A CLI does not see the run root (cli_agent.hpp, `hidden`), but a run
// made with `eat run --run-dir` elsewhere lay open to the CLIs of every
// other run of the same user: its teams' homes, transcripts and kernels,
// and the ./eval sockets of its workspaces. So each run, started or
// resumed, enters its folder here (and its workspaces' where they lie
// outside it), and at each attempt a CLI gets every folder entered here
// hidden but its own run's and one that holds eat's home
// (docs/agent-cli.md).
//
// Layout: one file per folder, named by the SHA-256 of its path and
// holding that path, in ~/.local/state/eat/runs/ of eat's user, mode 0700.
// A CLI reads it but cannot write it: eat's home is read-only to CLIs but
// for the `home_paths` copies.

#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace eat {

/// The registry's folder: ~/.local/state/eat/runs in the home that the
/// password database gives eat's user (so that HOME, which sudo, cron and
/// login shells set each their way, changes nothing), or in HOME where the
/// user has no entry there; none without an absolute home other than "/".
std::optional<std::filesystem::path> run_registry_dir();

/// Enters `run_dir` (an absolute path) in the registry at `registry`,
/// which it creates (mode 0700), and drops the entries of folders that are
/// gone. Entering a run twice keeps one entry. Returns "" or what failed.
std::string register_run(
  const std::filesystem::path& registry, const std::filesystem::path& run_dir);

/// The folders entered in the registry at `registry` that still exist, in
/// no particular order; entries that are not an absolute path are skipped.
/// None when there is no registry.
std::vector<std::filesystem::path> registered_runs(
  const std::filesystem::path& registry);

} // namespace eat
