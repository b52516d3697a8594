// The workspace of one cli-agent attempt: a fresh directory holding TASK.md
// (the prompt), AGENTS.md and CLAUDE.md (the rules), kernel.cpp (the file
// the agent edits), LEARNINGS.md, NOTES.md (the team's history), the `eval`
// script, an empty scratch/ and the harness folder .eat/. Before the agent
// runs, every file is hashed (a snapshot); afterwards the two snapshots are
// compared, and only kernel.cpp, scratch/ and the preset's own cache paths
// may differ. See docs/agent-cli.md.
//
// Plain functions, used by the cli agent on its own thread; a workspace
// belongs to one attempt and is left on disk for inspection.

#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/assignment.hpp"

namespace eat {

/// The files of a workspace (file names are fixed, see the header comment).
struct workspace_spec {
  std::string task_md;
  /// The rules, written as both AGENTS.md and CLAUDE.md.
  std::string rules_md;
  std::string kernel;
  std::string learnings_md;
  std::string notes_md;
  std::string eval_script;
};

/// Creates `base` or, when it exists, the first free `base.2`, `base.3`...;
/// returns the directory created. Fails with error::io_failure.
caf::expected<std::filesystem::path>
make_fresh_dir(const std::filesystem::path& base);

/// Writes the files of `spec` into the (empty) directory `dir`, makes `eval`
/// executable and creates scratch/ and .eat/. Fails with error::io_failure
/// naming the file.
caf::expected<void> materialise_workspace(const std::filesystem::path& dir,
                                          const workspace_spec& spec);

/// A fingerprint of every non-directory entry below a workspace, by path
/// relative to it ("kernel.cpp", "scratch/a.txt"): the SHA-256 of a regular
/// file (by size and time past 256 MiB, or once `hash_budget` bytes are
/// hashed in all), "symlink:<target>" for a link, "special" for anything
/// else. More than 100,000 entries fail the snapshot. The budget: 10,000
/// sparse files of 256 MiB (no disk) kept eat hashing for hours (red
/// team).
using workspace_snapshot = std::map<std::string, std::string>;

/// Takes the snapshot of `dir`; fails with error::io_failure.
caf::expected<workspace_snapshot> snapshot_workspace(
  const std::filesystem::path& dir, uintmax_t hash_budget = uintmax_t{1} << 30);

/// One difference between two snapshots.
struct workspace_change {
  std::string path;
  /// "added", "changed" or "removed".
  std::string what;
};

/// The paths that differ between `before` and `after`, sorted by path.
std::vector<workspace_change> diff_snapshots(const workspace_snapshot& before,
                                             const workspace_snapshot& after);

/// Whether an agent may change `path`: kernel.cpp, anything under scratch/,
/// or a match of `allowed` ("dir/" matches the folder, "x*" a prefix, other
/// entries the exact path).
bool change_allowed(const std::string& path,
                    const std::vector<std::string>& allowed);

/// Renders a prompt template: `{{task}}`, `{{kind}}`, `{{backend}}`,
/// `{{dtype}}`, `{{tolerance}}`, `{{workloads}}`, `{{strategy}}`,
/// `{{role}}`, `{{team}}`, `{{agent}}`, `{{parent}}`, `{{parent_speedup}}`,
/// `{{token_budget}}` and `{{history_count}}` are replaced; any other text
/// is kept.
std::string render_prompt(const std::string& tmpl, const assignment& a);

/// NOTES.md: the team's evaluated candidates (assignment.history) as a
/// markdown table, newest last.
std::string render_notes(const assignment& a);

/// The `eval` script: runs `<eat_program> agent-eval .eat/eval.sock
/// kernel.cpp` from the workspace; with no program it prints "evaluation
/// unavailable" and exits 2.
std::string make_eval_script(const std::string& eat_program);

} // namespace eat
