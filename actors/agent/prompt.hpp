// The prompt an LLM agent gets for an assignment: a role template (a
// markdown file, configs/prompts/<role>.md, editable without rebuilding)
// whose `{{name}}` placeholders are filled from the assignment, plus the
// parent kernel's source. Placeholders: docs/agent-http.md. Pure functions
// (load_role_template reads one file); any thread.

#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <caf/expected.hpp>

#include "actors/protocol/assignment.hpp"

namespace eat {

/// The system and user messages of one request.
struct prompt_text {
  std::string system;
  std::string user;
};

/// The instruction on how to answer, filled in as `{{answer_format}}` (and
/// appended when a template lacks that placeholder).
extern const char* const answer_format_text;

/// The template used when no prompts folder is configured.
extern const char* const default_role_template;

/// Reads `<dir>/<role>.md`; with an empty `dir`, returns
/// default_role_template. Fails (invalid_config) naming the missing file.
caf::expected<std::string> load_role_template(
  const std::filesystem::path& dir, const std::string& role);

/// The source of the assignment's parent: the task's baseline when the
/// parent id is empty or its family is "baseline", else the rendered
/// template family. Fails (agent_failed) for a "custom" parent, whose source
/// the assignment does not carry.
caf::expected<std::string> parent_source(const assignment& a);

/// Renders `role_template` for `a`: every placeholder filled, the history
/// limited to the last `history_rows` candidates. Fails (invalid_config) on
/// a placeholder that is not one of docs/agent-http.md's.
caf::expected<prompt_text> render_prompt(const std::string& role_template,
  const assignment& a, const std::string& parent_source,
  size_t history_rows = 20);

/// A rough, deliberately high estimate of the tokens of `text` (one per
/// three bytes), for budgeting before a request.
uint64_t estimate_tokens(const std::string& text);

} // namespace eat
