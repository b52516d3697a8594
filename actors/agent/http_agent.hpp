// The http agent actor: answers each assignment by asking an LLM over an
// OpenAI-compatible (/v1/chat/completions) or Anthropic (/v1/messages) API
// and turning the reply into one "custom" candidate (a fenced kernel, or
// SEARCH/REPLACE edits applied to the parent, reply_edits.hpp). It blocks on
// HTTP, so spawn it detached:
//
//   auto agent = sys.spawn<caf::detached>(http_agent, opts);
//
// Fail fast before a run with check_http_agent. Behaviour, formats and
// configuration: docs/agent-http.md.

#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "actors/agent/llm_api.hpp"
#include "actors/protocol/interfaces.hpp"

namespace eat {

/// Settings of an http agent ([agents.http] in the configuration).
struct http_agent_options {
  api_style style = api_style::openai;
  /// Server root, e.g. "https://api.openai.com" or "http://127.0.0.1:8000";
  /// a trailing "/v1" is accepted and dropped.
  std::string base_url;
  std::string model;
  /// Name of the environment variable holding the API key; empty for none.
  std::string api_key_env;
  /// Upper bound of output tokens per request.
  uint64_t max_tokens = 8192;
  /// Sends max_completion_tokens instead of max_tokens (OpenAI o-series).
  bool max_completion_tokens = false;
  std::optional<double> temperature;
  /// Uses server-sent events (usage read from whichever event carries it).
  bool stream = true;
  llm_prices prices;
  std::chrono::milliseconds connect_timeout{10'000};
  /// Limit of one request; 0 for none.
  std::chrono::milliseconds timeout{600'000};
  /// Abort a request when no byte arrives for this long; 0 for never.
  std::chrono::milliseconds idle_timeout{120'000};
  retry_policy retry;
  /// Folder of role templates (<role>.md); empty for the built-in template.
  std::filesystem::path prompts_dir;
  /// Candidates of the team's history shown in the prompt (the latest).
  size_t history_rows = 20;
  /// Requests are not sent when the budget leaves fewer output tokens.
  uint64_t min_output_tokens = 1024;
  /// Waits between attempts (seam for tests); empty for sleeping.
  std::function<void(std::chrono::milliseconds)> sleep;
  /// Finds the parent's source (seam; e.g. read from the run's store);
  /// empty for parent_source() of prompt.hpp.
  std::function<caf::expected<std::string>(const assignment&)> source_of;
  /// Set when the run is ending (supervisor_options::halt): a request in
  /// flight is abandoned and none is retried; none: it runs to its end.
  std::shared_ptr<std::atomic<bool>> halt;
};

/// Checks, before a run, that `opts` can work: the URL is well-formed, a
/// model is named, the API key variable (if configured) is set, the prompts
/// folder (if configured) exists, and the server accepts a TCP connection.
/// Fails (invalid_config or agent_failed) saying exactly what is missing,
/// e.g. "agents.http: cannot connect to 127.0.0.1:8000 (Connection
/// refused)".
caf::expected<void> check_http_agent(const http_agent_options& opts);

/// Asks the model for one candidate for `a`; blocks. Never fails: when
/// nothing usable came back, `failure` says why and `usage` still counts
/// what was spent. A reply whose usage exceeds a.token_budget keeps its
/// candidate and has failure "over token budget ...".
agent_reply http_reply(const assignment& a, const http_agent_options& opts);

/// Behaviour of an http agent; spawn detached (it blocks on HTTP).
agent_actor::behavior_type http_agent(
  agent_actor::pointer self, http_agent_options opts);

/// Sends one prompt (`system`, `user`) to the server of `opts` with its
/// retries and returns the model's text; used by the supervisor's llm
/// policy. Fails (agent_failed) saying why no answer came.
caf::expected<std::string> complete_prompt(const http_agent_options& opts,
                                           const std::string& system,
                                           const std::string& user);

} // namespace eat
