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
// Logins: a CLI refreshes its access token in its team's copy, and an
// OAuth refresh token may be good for one use only. So before each
// attempt eat gives the team its own copy of the `credentials` files, and
// after it takes back those the CLI changed. Modification times, which a
// CLI sets as it likes, play no part (a red team's CLI dated a stale
// token 2099, and it overwrote every later refresh).
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
/// with all they hold, links as links, files with their permissions and
/// owners; sockets and other special files are left out, and so is what a
/// CLI run as eat's user without capabilities could not read in place, and
/// what has an access ACL (which a copy would not keep).
/// Only its owner may enter it (mode 0700).
caf::expected<void> make_team_home(const std::filesystem::path& home,
  const std::vector<std::string>& home_paths, const std::filesystem::path& dir);

/// The mounts that show each entry of `home_paths` in `dir` (a team's
/// home) in place of the one in `home`, writable, for the entries both
/// have (symbolic links in `home` resolved: the mount goes where the
/// kernel looks).
std::vector<cli_mount> home_mounts(const std::filesystem::path& home,
  const std::vector<std::string>& home_paths, const std::filesystem::path& dir);

/// The mounts that hide each entry of `hidden` that exists in `home` (a
/// folder as an empty one, a file as an empty file; symbolic links
/// resolved): the operator's keys and other tools' logins.
std::vector<cli_mount> hidden_home_mounts(
  const std::filesystem::path& home, const std::vector<std::string>& hidden);

/// Largest credentials file eat reads in a team's home, in bytes.
constexpr size_t max_credentials_bytes = size_t{1} << 20;

/// Gives team home `dir` eat's copy of each of `credentials` (paths
/// relative to `home`) that eat's home holds, where the team's differs
/// or is missing (where its folder exists), and remembers what it gave,
/// beside `dir`. In `dir`, which a CLI writes, a file is read only when it
/// is a regular file of at most max_credentials_bytes reached without
/// following a link, and replaced by writing beside it and renaming.
/// Returns what it could not do, a line each ("" when all went well).
std::string give_credentials(const std::filesystem::path& home,
  const std::filesystem::path& dir,
  const std::vector<std::string>& credentials);

/// Takes back into `home` each of `credentials` that the team's CLI
/// changed in `dir` since give_credentials (a token it refreshed), where
/// `home` holds that file: written beside and renamed, with the owner and
/// mode of the file it replaces. Returns what it could not do, a line each.
std::string take_credentials(const std::filesystem::path& home,
  const std::filesystem::path& dir,
  const std::vector<std::string>& credentials);

} // namespace eat
