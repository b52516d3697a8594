// The cli agent actor: answers each assignment by running an external coding
// agent (Claude Code, Codex, Gemini CLI, aider, or a custom program) in a
// fresh workspace (workspace.hpp), serving its `./eval` (eval_channel.hpp),
// and collecting kernel.cpp, the token usage and the transcript. One attempt:
//
//   materialise ─► snapshot ─► run CLI ─► snapshot ─► diff ─► reply
//                      (eval server up)     │
//   retryable failure (429, 5xx, 529, overloaded) ─► back off, new attempt
//
// It blocks on a subprocess: spawn it with `sys.spawn<caf::detached>(
// cli_agent, opts)`. run_cli_assignment is the same work as plain code, for
// tests and other callers. See docs/agent-cli.md.

#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/agent/cli_presets.hpp"
#include "actors/agent/eval_channel.hpp"
#include "actors/protocol/interfaces.hpp"

namespace eat {

/// Settings of a cli agent ([agents.cli] in the configuration).
struct cli_agent_options {
  /// "claude", "codex", "gemini", "aider" or "custom" (cli_presets.hpp).
  std::string preset = "claude";
  /// Replaces the preset's argument template when not empty (required for
  /// "custom"); placeholders {prompt}, {prompt_file}, {workspace},
  /// {max_turns}.
  std::vector<std::string> args;
  /// Replaces the preset's program (a name looked up in PATH, or a path).
  std::string program;
  /// Replaces the preset's output format: "claude", "codex", "gemini",
  /// "aider" or "plain" ("" keeps the preset's).
  std::string output_format;
  /// Where the prompt goes: "stdin", "none" ("" keeps the preset's; with
  /// "none" use {prompt} or {prompt_file} in args).
  std::string prompt_input;
  /// Workspaces are created below this folder, one per attempt.
  std::filesystem::path work_dir;
  /// Folder of the role prompts (<role>.md) and the rules (AGENTS.md).
  std::filesystem::path prompts_dir;
  /// Environment variables passed on besides PATH, HOME, LANG and TERM
  /// (e.g. ANTHROPIC_API_KEY); nothing else reaches the CLI.
  std::vector<std::string> env_allow;
  /// Workspace paths the CLI may change besides kernel.cpp, scratch/ and
  /// the preset's own ("dir/" a folder, "x*" a prefix).
  std::vector<std::string> allowed_paths;
  /// Wall-clock limit of one attempt, in seconds.
  double timeout_s = 1800;
  /// Seconds without output before the CLI is stopped.
  double idle_timeout_s = 300;
  /// Seconds between SIGTERM and SIGKILL.
  double kill_grace_s = 5;
  /// The {max_turns} placeholder (Claude's --max-turns).
  uint32_t max_turns = 30;
  /// Further attempts after a retryable failure.
  uint32_t retries = 3;
  /// Back-off before attempt k+1: retry_base_s * 2^(k-1) seconds.
  double retry_base_s = 10;
  /// How long one `./eval` may wait for the device, in seconds.
  double eval_timeout_s = 1800;
  /// `./eval` calls answered per assignment, over all its attempts; later
  /// ones are "unavailable" (0: no limit).
  uint32_t max_evals = 20;
  /// Path of the eat executable that `./eval` runs (`eat agent-eval`).
  std::string eat_program;
  /// Path of eat-keeper, under which the CLI runs so that the daemons it
  /// starts die with it (keeper.hpp); empty: the CLI runs directly.
  std::string keeper_program;
  /// Whether the keeper runs the CLI in PID and mount namespaces of its
  /// own, in which `read_only` (e.g. the run directory) is read-only but
  /// for the CLI's workspace.
  bool namespaces = true;
  std::vector<std::filesystem::path> read_only;
  /// With namespaces: paths the CLI sees as empty folders, before
  /// `read_only` applies (the run root: other runs' workspaces, homes and
  /// ./eval sockets).
  std::vector<std::filesystem::path> hidden;
  /// With namespaces: the registry of eat's runs (run_registry.hpp), read
  /// at each attempt; every folder entered there is hidden too, after
  /// `read_only` applies, but one that is a path of `read_only` (its own
  /// run, ...) or holds eat's home; the paths of `read_only` in a hidden
  /// one are shown again. None: only `hidden`.
  std::optional<std::filesystem::path> run_registry;
  /// What the CLI may write of its home, where they exist: each team
  /// writes a copy of its own (cli_home.hpp); the rest of the home is
  /// read-only.
  std::vector<std::string> home_paths
    = {".claude/", ".claude.json", ".codex/", ".gemini/", ".aider/"};
  /// With namespaces: paths of its home the CLI does not see, where they
  /// exist (an empty folder, or an empty file): the operator's keys and
  /// other tools' logins, which a red team's CLI read (~/.ssh/id_*).
  std::vector<std::string> hidden_home_paths
    = {".ssh/", ".gnupg/", ".config/gh/", ".docker/", ".kube/", ".netrc",
      ".git-credentials", ".pgpass"};
  /// Login files under `home_paths`, given to each team's copy before an
  /// attempt and taken back when its CLI changed them (cli_home.hpp).
  std::vector<std::string> credentials = {".claude/.credentials.json",
    ".codex/auth.json", ".gemini/oauth_creds.json"};
  /// The device `./eval` submits to; none: eval answers "unavailable".
  device_actor device;
  /// Where parent kernels of custom candidates are read from
  /// (/teams/<team>/candidates/<id>/kernel.cpp); none: only baseline and
  /// template parents can be materialised.
  store_actor store;
  /// Prompt template used when the assignment's role has none.
  std::string role = "implementer";
  /// Transcript kept per assignment: the last this many bytes.
  size_t max_transcript = size_t{1} << 20;
  /// Set when the run is ending (the supervisor's stop: SIGINT, SIGTERM,
  /// max_wall_s): a running CLI is stopped at once and not retried; none:
  /// it runs to its own end (Ctrl-C waited up to timeout_s for it).
  std::shared_ptr<std::atomic<bool>> halt;
};

/// Checks at start-up that `opts` can work: a known preset, the program
/// found (e.g. "agents.cli: program 'claude' not found in PATH"), the prompt
/// templates present, the work folder writable. Fails with
/// error::invalid_config.
caf::expected<void> check_cli_agent(const cli_agent_options& opts);

/// The preset named by `opts` with its overrides applied.
caf::expected<cli_preset> effective_preset(const cli_agent_options& opts);

/// What run_cli_assignment did.
struct cli_outcome {
  agent_reply reply;
  /// Attempts made (1 unless a retryable failure happened).
  uint32_t attempts = 0;
  /// The workspace of the last attempt (empty if none was made).
  std::filesystem::path workspace;
};

/// Runs one assignment to the end, blocking: `kernel` is what kernel.cpp
/// starts from, `eval` answers `./eval`, `serial` numbers the workspace.
/// Never throws; a failure is reported in reply.failure.
cli_outcome run_cli_assignment(const assignment& a, const std::string& kernel,
                               const cli_agent_options& opts, uint64_t serial,
                               const eval_handler& eval);

/// The kernel an assignment starts from: the task's baseline when there is
/// no parent, the rendered template for a template parent, else the
/// parent's kernel.cpp from `store` (waiting up to 60 s). Call from a
/// thread that may block.
caf::expected<std::string> starting_kernel(caf::actor_system& sys,
                                           const assignment& a,
                                           const store_actor& store);

/// Behaviour of a cli agent; spawn detached (it blocks).
agent_actor::behavior_type cli_agent(agent_actor::pointer self,
                                     cli_agent_options opts);

} // namespace eat
