// Presets of the cli agent backend: for each supported coding-agent CLI
// (Claude Code, Codex, Gemini CLI, aider) the program, the argument template,
// where the prompt goes, which extra files it may leave in the workspace, and
// how to read its output (token usage, final message, errors). `custom`
// takes everything from the configuration. See docs/agent-cli.md.
//
// Pure data and parsers; a usage_parser belongs to the one thread that feeds
// it (the cli agent's).

#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/assignment.hpp"

namespace eat {

/// How a CLI reports usage and its final message on stdout.
enum class cli_output_format {
  /// Claude Code `--output-format stream-json`: JSON lines, a final
  /// `{"type":"result"}` object.
  claude_stream_json,
  /// Codex `exec --json`: JSON lines with `turn.completed` usage per turn.
  codex_jsonl,
  /// Gemini CLI `--output-format json`: one object with `response`, `stats`.
  gemini_json,
  /// aider's plain text with "Tokens: ... Cost: ..." lines.
  aider_text,
  /// Plain text, no usage (custom programs).
  plain,
};

/// Parses "claude", "codex", "gemini", "aider" or "plain".
caf::expected<cli_output_format> parse_output_format(std::string_view name);

/// How to run one kind of CLI.
struct cli_preset {
  std::string name;
  /// Default program, looked up in PATH.
  std::string program;
  /// Argument template (after the program); placeholders: {prompt} (the
  /// TASK.md text), {prompt_file} ("TASK.md"), {workspace} (absolute path),
  /// {max_turns}.
  std::vector<std::string> args;
  /// Whether the prompt text is written to the CLI's stdin.
  bool prompt_on_stdin = false;
  cli_output_format format = cli_output_format::plain;
  /// Workspace paths the CLI may create or change besides kernel.cpp and
  /// scratch/ (its own caches): "dir/" is a folder, "x*" a prefix.
  std::vector<std::string> allowed_paths;
};

/// The preset called `name` ("claude", "codex", "gemini", "aider", "custom");
/// fails with error::invalid_config for any other name.
caf::expected<cli_preset> find_preset(const std::string& name);

/// Replaces every `{key}` of `values` in each argument; other text stays.
std::vector<std::string>
expand_args(const std::vector<std::string>& args,
            const std::map<std::string, std::string>& values);

/// Reads a CLI's stdout, line by line as it arrives (Claude and Codex stream
/// their usage) and once more as a whole at the end (Gemini prints one
/// object). The usage so far is available at any time.
class usage_parser {
public:
  explicit usage_parser(cli_output_format format) : format_(format) {
    // nop
  }

  /// Takes one line of stdout.
  void feed_line(std::string_view line);

  /// Takes the whole (kept) stdout once the process has ended.
  void finish(std::string_view output);

  /// Usage parsed so far, normalised (input excludes cached input).
  const token_usage& usage() const {
    return usage_;
  }

  /// The agent's final message ("" if none was seen).
  const std::string& final_message() const {
    return final_message_;
  }

  /// Errors the CLI reported in its output ("" if none).
  const std::string& error_text() const {
    return errors_;
  }

private:
  void feed_claude(std::string_view line);
  void feed_codex(std::string_view line);
  void feed_aider(std::string_view line);
  void finish_gemini(std::string_view output);
  void note_error(std::string_view text);

  cli_output_format format_;
  token_usage usage_;
  std::string final_message_;
  std::string errors_;
  /// Claude: usage of each assistant message by id, until the result.
  std::map<std::string, token_usage> claude_messages_;
  bool claude_result_seen_ = false;
};

/// The body of the last fenced code block tagged ```cpp, ```c++ or untagged
/// in `text`, or nullopt.
std::optional<std::string> last_cpp_block(std::string_view text);

/// Whether a failed attempt's text says it is worth retrying: rate limits,
/// HTTP 429, 5xx, 529, "overloaded".
bool is_retryable(std::string_view text);

} // namespace eat
