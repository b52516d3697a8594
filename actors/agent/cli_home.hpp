// A home of each team's own for its coding-agent CLIs (docs/agent-cli.md,
// "Homes").
//
// A CLI keeps state in its home: sessions, transcripts, settings, hooks.
// Kept in eat's own home, that state was shared by every team, by later
// runs and by the operator's own CLI: one team's CLI could read another's
// transcripts (~/.claude/projects/) and plant hooks in
// ~/.claude/settings.json that the operator's CLI, unconfined, would run
// later. So each team gets a copy of the `home_paths` entries of eat's
// home, made at its first attempt of the run, which its CLIs' mount
// namespaces show in their place (eat-keeper --bind); eat's own entries
// are never written by a CLI.
//
// Logins: a CLI refreshes its access token in its team's copy. The
// `credentials` files are kept in step both ways before and after every
// attempt, the newer over the older, so that a token refreshed in one
// place is the one used everywhere next (an OAuth refresh token may be
// good for one use only).
//
// Called by the cli agent's actors, on their own threads; several agents
// of one team may make its home at once (made beside, renamed into place).

#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/agent/cli_process.hpp"

namespace eat {

/// The folder of team `team`'s home under the CLI workspaces' `work_dir`.
std::filesystem::path team_home_dir(
  const std::filesystem::path& work_dir, const std::string& team);

/// Makes `dir`, unless it exists, a copy of each entry of `home_paths`
/// (relative to `home`, "name/" or "name") that exists in `home`: folders
/// with all they hold, links as links, files with their permissions;
/// sockets and other special files are left out. Only its owner may enter
/// it (mode 0700).
caf::expected<void> make_team_home(const std::filesystem::path& home,
  const std::vector<std::string>& home_paths, const std::filesystem::path& dir);

/// The mounts that show each entry of `home_paths` in `dir` (a team's
/// home) in place of the one in `home`, writable, for the entries both
/// have (symbolic links in `home` resolved: the mount goes where the
/// kernel looks).
std::vector<cli_mount> home_mounts(const std::filesystem::path& home,
  const std::vector<std::string>& home_paths, const std::filesystem::path& dir);

/// Largest credentials file kept in step, in bytes.
constexpr size_t max_credentials_bytes = size_t{1} << 20;

/// Keeps each of `credentials` (paths relative to `home`) in step between
/// `home` and `dir`, a team's home: where both hold it and they differ,
/// the one modified last replaces the other; one only `home` holds is
/// copied to `dir` where its folder exists there. Replacing writes beside
/// and renames. In `dir`, which a CLI writes, a file is read only when it
/// is a regular file of at most max_credentials_bytes, reached without
/// following a symbolic link. Returns what it could not do, a line each
/// ("" when all went well).
std::string sync_credentials(const std::filesystem::path& home,
  const std::filesystem::path& dir,
  const std::vector<std::string>& credentials);

} // namespace eat
