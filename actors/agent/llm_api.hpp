// The two chat API styles the http agent speaks, as plain functions: the
// request (path, headers, JSON body) for OpenAI-compatible
// `/v1/chat/completions` and Anthropic `/v1/messages`; the reply (a JSON
// body, or server-sent events fed piece by piece) as text plus normalised
// token usage; error bodies classified as retryable or not; the retry delay.
// Formats: docs/agent-http.md. Pure functions and a single-owner parser
// object; any thread.

#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <caf/expected.hpp>

#include "actors/agent/http_client.hpp"
#include "actors/protocol/assignment.hpp"

namespace eat {

/// Which API a server speaks.
enum class api_style {
  /// POST /v1/chat/completions (OpenAI, vLLM, llama.cpp server, Ollama).
  openai,
  /// POST /v1/messages (Anthropic).
  anthropic,
};

/// Parses "openai" or "anthropic".
std::optional<api_style> parse_api_style(std::string_view x);

/// "openai" or "anthropic".
std::string to_string(api_style x);

/// Prices in US dollars per million tokens (0 when not configured).
struct llm_prices {
  double input = 0;
  double cache_read = 0;
  double cache_write = 0;
  /// Output tokens, reasoning included.
  double output = 0;
};

/// What to ask one model.
struct llm_request {
  api_style style = api_style::openai;
  std::string model;
  std::string system;
  std::string user;
  uint64_t max_tokens = 0;
  /// Sends `max_completion_tokens` instead of `max_tokens` (OpenAI's
  /// reasoning models refuse the latter).
  bool max_completion_tokens = false;
  std::optional<double> temperature;
  bool stream = false;
};

/// The path of the API under the base URL, e.g. "/v1/messages".
std::string api_path(api_style style);

/// Request headers: content type and the API key in the style's header
/// (none when `api_key` is empty).
std::vector<std::pair<std::string, std::string>> api_headers(
  api_style style, const std::string& api_key);

/// The JSON request body.
std::string request_body(const llm_request& req);

/// What a model answered.
struct llm_result {
  /// The reply text (all text content concatenated).
  std::string text;
  token_usage usage;
  /// "stop", "length", "end_turn", "max_tokens", ... ("" when not given).
  std::string finish_reason;
};

/// Why one attempt failed and whether trying again may help.
struct call_failure {
  std::string message;
  bool retryable = false;
  /// HTTP status (0 for a transport or stream failure).
  long status = 0;
};

/// Parses a non-streaming JSON reply. Fails (agent_failed) on malformed
/// JSON or a body without content.
caf::expected<llm_result> parse_reply(api_style style, std::string_view body);

/// Parses a server-sent event stream fed in arbitrary pieces: text deltas
/// are concatenated, usage is read from whichever event carries it (later
/// values win per field), and an error event ends the stream with a failure.
class sse_parser {
public:
  explicit sse_parser(api_style style);

  /// Consumes the next piece of the stream.
  void feed(std::string_view piece);

  /// The result once the stream ended; a failure when it carried an error
  /// event or ended before its terminator (`data: [DONE]` or message_stop).
  std::variant<llm_result, call_failure> finish();

private:
  void on_event(std::string_view data);
  void on_openai(std::string_view data);
  void on_anthropic(std::string_view data);

  api_style style_;
  std::string pending_;
  std::string data_;
  llm_result result_;
  std::optional<call_failure> failure_;
  bool done_ = false;
  bool any_event_ = false;
};

/// Classifies an HTTP error response: retryable for 408, 409, 429, 5xx and
/// 529, except a 429 whose body says a spend or quota limit was reached;
/// never for other 4xx. The message names the status and the server's own
/// message (OpenAI and Anthropic error shapes, or a plain-text body).
call_failure classify_failure(long status, std::string_view body);

/// The delay a server asks for: `retry-after-ms` (milliseconds), else
/// `retry-after` (seconds or an HTTP date, relative to `now`).
std::optional<std::chrono::milliseconds> retry_after(const header_map& headers,
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

/// How often and how patiently to retry.
struct retry_policy {
  /// Attempts in all (1 = never retry).
  uint32_t attempts = 5;
  /// Delay before the second attempt; doubled for each further one.
  std::chrono::milliseconds base_delay{1000};
  /// Upper bound of any delay, including one a server asks for.
  std::chrono::milliseconds max_delay{60'000};
};

/// Delay before attempt `next` (2 for the first retry): the server's
/// `asked` delay if any, else base_delay * 2^(next-2) with jitter in
/// [50%, 100%]; never more than max_delay.
std::chrono::milliseconds backoff_delay(const retry_policy& policy,
  uint32_t next, std::optional<std::chrono::milliseconds> asked,
  std::mt19937_64& rng);

/// The cost of `usage` at `prices`.
double cost_usd(const token_usage& usage, const llm_prices& prices);

} // namespace eat
