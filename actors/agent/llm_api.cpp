#include "actors/agent/llm_api.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

#include <nlohmann/json.hpp>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

using json = nlohmann::json;

/// `j[key]` as a count: 0 when missing, null or not a number.
uint64_t count(const json& j, const char* key) {
  if (!j.is_object())
    return 0;
  auto i = j.find(key);
  if (i == j.end() || !i->is_number())
    return 0;
  return token_count(i->get<double>());
}

/// `j[key]` as a string: "" when missing or not a string.
std::string text_of(const json& j, const char* key) {
  if (!j.is_object())
    return {};
  auto i = j.find(key);
  return i != j.end() && i->is_string() ? i->get<std::string>() : "";
}

const json& member(const json& j, const char* key) {
  static const json null_json;
  if (!j.is_object())
    return null_json;
  auto i = j.find(key);
  return i == j.end() ? null_json : *i;
}

/// OpenAI usage: prompt_tokens include cached ones, completion_tokens
/// include reasoning ones.
token_usage openai_usage(const json& u) {
  token_usage result;
  auto cached = count(member(u, "prompt_tokens_details"), "cached_tokens");
  auto reasoning
    = count(member(u, "completion_tokens_details"), "reasoning_tokens");
  auto prompt = count(u, "prompt_tokens");
  auto completion = count(u, "completion_tokens");
  result.cache_read = std::min(cached, prompt);
  result.input = prompt - result.cache_read;
  result.reasoning = std::min(reasoning, completion);
  result.output = completion - result.reasoning;
  return result;
}

/// Anthropic usage: each field present in `u` replaces the one in `x`.
void merge_anthropic_usage(token_usage& x, const json& u) {
  if (!u.is_object())
    return;
  if (u.contains("input_tokens"))
    x.input = count(u, "input_tokens");
  if (u.contains("cache_read_input_tokens"))
    x.cache_read = count(u, "cache_read_input_tokens");
  if (u.contains("cache_creation_input_tokens"))
    x.cache_write = count(u, "cache_creation_input_tokens");
  if (u.contains("output_tokens"))
    x.output = count(u, "output_tokens");
}

std::string lower(std::string_view x) {
  std::string out{x};
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return std::tolower(c);
  });
  return out;
}

std::string trimmed(std::string_view x, size_t limit) {
  auto first = x.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    return {};
  auto last = x.find_last_not_of(" \t\r\n");
  auto out = std::string{x.substr(first, last - first + 1)};
  if (out.size() > limit)
    out = out.substr(0, limit) + "...";
  return out;
}

/// The server's own words from an error body: error.message of both
/// styles, error as a string, message, or the plain text.
std::string server_message(std::string_view body) {
  auto j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    const auto& e = member(j, "error");
    if (e.is_string())
      return trimmed(e.get<std::string>(), 500);
    auto type = text_of(e, "type");
    auto message = text_of(e, "message");
    if (!message.empty())
      return trimmed(type.empty() ? message : type + ": " + message, 500);
    if (!text_of(j, "message").empty())
      return trimmed(text_of(j, "message"), 500);
  }
  return trimmed(body, 500);
}

/// Error types of a stream's error event that are worth retrying.
bool retryable_type(const std::string& type) {
  return type == "overloaded_error" || type == "api_error"
         || type == "rate_limit_error" || type == "server_error"
         || type == "timeout_error";
}

call_failure stream_error(const json& e) {
  auto type = text_of(e, "type");
  auto message = text_of(e, "message");
  if (e.is_string())
    message = e.get<std::string>();
  return {
    "error event in stream: " + (type.empty() ? "" : type + ": ") + message,
    retryable_type(type), 0};
}

std::string openai_body(const llm_request& req) {
  json j;
  j["model"] = req.model;
  j["messages"] = json::array({{{"role", "system"}, {"content", req.system}},
    {{"role", "user"}, {"content", req.user}}});
  j[req.max_completion_tokens ? "max_completion_tokens" : "max_tokens"]
    = req.max_tokens;
  if (req.temperature)
    j["temperature"] = *req.temperature;
  j["stream"] = req.stream;
  if (req.stream)
    j["stream_options"] = {{"include_usage", true}};
  return j.dump();
}

std::string anthropic_body(const llm_request& req) {
  json j;
  j["model"] = req.model;
  j["max_tokens"] = req.max_tokens;
  j["system"] = req.system;
  j["messages"] = json::array({{{"role", "user"}, {"content", req.user}}});
  if (req.temperature)
    j["temperature"] = *req.temperature;
  j["stream"] = req.stream;
  return j.dump();
}

caf::expected<llm_result> parse_openai(const json& j) {
  const auto& choices = member(j, "choices");
  if (!choices.is_array() || choices.empty())
    return make_error(error::agent_failed, "reply has no choices");
  llm_result result;
  result.text = text_of(member(choices[0], "message"), "content");
  result.finish_reason = text_of(choices[0], "finish_reason");
  result.usage = openai_usage(member(j, "usage"));
  return result;
}

caf::expected<llm_result> parse_anthropic(const json& j) {
  const auto& content = member(j, "content");
  if (!content.is_array())
    return make_error(error::agent_failed, "reply has no content");
  llm_result result;
  for (const auto& block : content)
    if (text_of(block, "type") == "text")
      result.text += text_of(block, "text");
  result.finish_reason = text_of(j, "stop_reason");
  merge_anthropic_usage(result.usage, member(j, "usage"));
  return result;
}

} // namespace

std::optional<api_style> parse_api_style(std::string_view x) {
  if (x == "openai")
    return api_style::openai;
  if (x == "anthropic")
    return api_style::anthropic;
  return std::nullopt;
}

std::string to_string(api_style x) {
  return x == api_style::openai ? "openai" : "anthropic";
}

std::string api_path(api_style style) {
  return style == api_style::openai ? "/v1/chat/completions" : "/v1/messages";
}

std::vector<std::pair<std::string, std::string>> api_headers(
  api_style style, const std::string& api_key) {
  std::vector<std::pair<std::string, std::string>> result{
    {"Content-Type", "application/json"}};
  if (style == api_style::anthropic) {
    result.emplace_back("anthropic-version", "2023-06-01");
    if (!api_key.empty())
      result.emplace_back("x-api-key", api_key);
  } else if (!api_key.empty()) {
    result.emplace_back("Authorization", "Bearer " + api_key);
  }
  return result;
}

std::string request_body(const llm_request& req) {
  return req.style == api_style::openai ? openai_body(req)
                                        : anthropic_body(req);
}

caf::expected<llm_result> parse_reply(api_style style, std::string_view body) {
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(error::agent_failed,
      "malformed reply (not a JSON object): " + trimmed(body, 200));
  if (j.contains("error"))
    return make_error(
      error::agent_failed, "error in reply: " + server_message(body));
  return style == api_style::openai ? parse_openai(j) : parse_anthropic(j);
}

sse_parser::sse_parser(api_style style) : style_(style) {
  // nop
}

void sse_parser::feed(std::string_view piece) {
  // What is pending holds no line end: look in the new piece only (a
  // stream without newlines made every piece rescan all it had sent).
  auto from = pending_.size();
  pending_.append(piece);
  size_t start = 0;
  for (auto end = pending_.find('\n', from); end != std::string::npos;
       end = pending_.find('\n', start)) {
    std::string_view line{pending_.data() + start, end - start};
    start = end + 1;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty()) {
      if (!data_.empty())
        on_event(data_);
      data_.clear();
    } else if (line.rfind("data:", 0) == 0) {
      auto value = line.substr(5);
      if (!value.empty() && value.front() == ' ')
        value.remove_prefix(1);
      if (!data_.empty())
        data_ += '\n';
      data_.append(value);
    } // "event:", "id:", "retry:" and ": comments" carry nothing we need
  }
  pending_.erase(0, start);
}

std::variant<llm_result, call_failure> sse_parser::finish() {
  if (!pending_.empty())
    feed("\n");
  if (!data_.empty())
    on_event(data_);
  data_.clear();
  if (failure_)
    return *failure_;
  if (!done_)
    return call_failure{any_event_ ? "the stream ended before its end marker"
                                   : "the stream carried no events",
      true, 0};
  return result_;
}

void sse_parser::on_event(std::string_view data) {
  if (done_ || failure_)
    return;
  any_event_ = true;
  if (style_ == api_style::openai)
    on_openai(data);
  else
    on_anthropic(data);
}

void sse_parser::on_openai(std::string_view data) {
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  auto j = json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    failure_ = call_failure{"malformed event: " + trimmed(data, 200), false, 0};
    return;
  }
  if (j.contains("error")) {
    failure_ = stream_error(member(j, "error"));
    return;
  }
  const auto& choices = member(j, "choices");
  if (choices.is_array() && !choices.empty()) {
    result_.text += text_of(member(choices[0], "delta"), "content");
    if (auto reason = text_of(choices[0], "finish_reason"); !reason.empty())
      result_.finish_reason = reason;
  }
  if (member(j, "usage").is_object())
    result_.usage = openai_usage(member(j, "usage"));
}

void sse_parser::on_anthropic(std::string_view data) {
  auto j = json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    failure_ = call_failure{"malformed event: " + trimmed(data, 200), false, 0};
    return;
  }
  auto type = text_of(j, "type");
  if (type == "message_start") {
    merge_anthropic_usage(result_.usage, member(member(j, "message"), "usage"));
  } else if (type == "content_block_delta") {
    const auto& delta = member(j, "delta");
    if (text_of(delta, "type") == "text_delta")
      result_.text += text_of(delta, "text");
  } else if (type == "message_delta") {
    if (auto reason = text_of(member(j, "delta"), "stop_reason");
        !reason.empty())
      result_.finish_reason = reason;
    merge_anthropic_usage(result_.usage, member(j, "usage"));
  } else if (type == "message_stop") {
    done_ = true;
  } else if (type == "error") {
    failure_ = stream_error(member(j, "error"));
  }
}

call_failure classify_failure(long status, std::string_view body) {
  auto message = server_message(body);
  auto said = lower(body);
  bool spend_limit = said.find("insufficient_quota") != std::string::npos
                     || said.find("billing") != std::string::npos
                     || said.find("spend limit") != std::string::npos
                     || said.find("credit balance") != std::string::npos;
  auto prefix = "HTTP " + std::to_string(status) + ": ";
  if (status == 429 && spend_limit)
    return {"spend limit reached (HTTP 429): " + message, false, status};
  bool retryable = status == 408 || status == 409 || status == 429
                   || (status >= 500 && status <= 599);
  return {prefix + message, retryable, status};
}

std::optional<std::chrono::milliseconds> retry_after(
  const header_map& headers, std::chrono::system_clock::time_point now) {
  using std::chrono::milliseconds;
  auto number = [](const std::string& x) -> std::optional<double> {
    char* end = nullptr;
    auto v = std::strtod(x.c_str(), &end);
    if (x.empty() || end != x.c_str() + x.size() || !std::isfinite(v) || v < 0)
      return std::nullopt;
    return v;
  };
  if (auto i = headers.find("retry-after-ms"); i != headers.end())
    if (auto ms = number(i->second))
      return milliseconds{static_cast<int64_t>(std::llround(*ms))};
  auto i = headers.find("retry-after");
  if (i == headers.end())
    return std::nullopt;
  if (auto secs = number(i->second))
    return milliseconds{static_cast<int64_t>(std::llround(*secs * 1000))};
  std::tm tm{};
  auto* end = strptime(i->second.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
  if (end == nullptr)
    return std::nullopt;
  auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
  auto delta = std::chrono::duration_cast<milliseconds>(when - now);
  return std::max(delta, milliseconds{0});
}

std::chrono::milliseconds backoff_delay(const retry_policy& policy,
  uint32_t next, std::optional<std::chrono::milliseconds> asked,
  std::mt19937_64& rng) {
  using std::chrono::milliseconds;
  if (asked)
    return std::min(*asked, policy.max_delay);
  auto doublings = std::min<uint32_t>(next >= 2 ? next - 2 : 0, 30);
  auto full = static_cast<double>(policy.base_delay.count())
              * static_cast<double>(uint64_t{1} << doublings);
  std::uniform_real_distribution<double> jitter{0.5, 1.0};
  auto delay = milliseconds{static_cast<int64_t>(full * jitter(rng))};
  return std::min(delay, policy.max_delay);
}

double cost_usd(const token_usage& usage, const llm_prices& prices) {
  auto priced = [](uint64_t n, double per_million) {
    return static_cast<double>(n) * per_million / 1e6;
  };
  return priced(usage.input, prices.input)
         + priced(usage.cache_read, prices.cache_read)
         + priced(usage.cache_write, prices.cache_write)
         + priced(usage.output + usage.reasoning, prices.output);
}

} // namespace eat
