#include "actors/agent/cli_presets.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

#include <nlohmann/json.hpp>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

using json = nlohmann::json;

/// Parses one JSON value without exceptions; a discarded value on error.
json parse_json(std::string_view text) {
  return json::parse(text.begin(), text.end(), nullptr, false);
}

/// The member `key` of `obj`, or null when `obj` is no object or lacks it.
const json& member(const json& obj, const char* key) {
  static const json null_value;
  if (!obj.is_object())
    return null_value;
  auto i = obj.find(key);
  return i == obj.end() ? null_value : *i;
}

uint64_t count_of(const json& obj, const char* key) {
  if (!obj.is_object())
    return 0;
  auto i = obj.find(key);
  if (i == obj.end() || !i->is_number())
    return 0;
  if (i->is_number_unsigned())
    return i->get<uint64_t>();
  if (i->is_number_integer())
    return static_cast<uint64_t>(std::max<int64_t>(0, i->get<int64_t>()));
  return token_count(i->get<double>());
}

std::string string_of(const json& obj, const char* key) {
  if (!obj.is_object())
    return {};
  auto i = obj.find(key);
  return i != obj.end() && i->is_string() ? i->get<std::string>()
                                          : std::string{};
}

/// Claude's usage object: input_tokens already excludes cached input.
token_usage claude_usage(const json& u) {
  token_usage t;
  t.input = count_of(u, "input_tokens");
  t.cache_read = count_of(u, "cache_read_input_tokens");
  t.cache_write = count_of(u, "cache_creation_input_tokens");
  t.output = count_of(u, "output_tokens");
  return t;
}

/// The text blocks of an assistant message, joined.
std::string message_text(const json& message) {
  std::string text;
  const auto& content = member(message, "content");
  if (!content.is_array())
    return text;
  for (const auto& block : content)
    if (string_of(block, "type") == "text")
      text += string_of(block, "text");
  return text;
}

/// Parses "12", "4.2k" or "1.1M" as aider prints token counts.
uint64_t aider_count(const std::string& number, const std::string& suffix) {
  double v = std::strtod(number.c_str(), nullptr);
  if (suffix == "k" || suffix == "K")
    v *= 1e3;
  else if (suffix == "M" || suffix == "m")
    v *= 1e6;
  return static_cast<uint64_t>(v + 0.5);
}

std::string lower(std::string_view text) {
  std::string out{text};
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos)
    return {};
  auto e = s.find_last_not_of(" \t\r");
  return std::string{s.substr(b, e - b + 1)};
}

} // namespace

caf::expected<cli_output_format> parse_output_format(std::string_view name) {
  if (name == "claude")
    return cli_output_format::claude_stream_json;
  if (name == "codex")
    return cli_output_format::codex_jsonl;
  if (name == "gemini")
    return cli_output_format::gemini_json;
  if (name == "aider")
    return cli_output_format::aider_text;
  if (name == "plain")
    return cli_output_format::plain;
  return make_error(error::invalid_config,
                    "agents.cli: unknown output format '" + std::string{name}
                      + "' (claude, codex, gemini, aider or plain)");
}

caf::expected<cli_preset> find_preset(const std::string& name) {
  cli_preset p;
  p.name = name;
  if (name == "claude") {
    p.program = "claude";
    p.args = {"-p", "--output-format", "stream-json", "--verbose",
              "--max-turns", "{max_turns}", "--permission-mode", "acceptEdits",
              "--allowedTools", "Read,Edit,Write,Glob,Grep,Bash(./eval),Bash(./eval:*)"};
    p.prompt_on_stdin = true;
    p.format = cli_output_format::claude_stream_json;
    p.allowed_paths = {".claude/"};
  } else if (name == "codex") {
    p.program = "codex";
    p.args = {"exec", "--json", "--sandbox", "workspace-write",
              "--skip-git-repo-check", "-"};
    p.prompt_on_stdin = true;
    p.format = cli_output_format::codex_jsonl;
  } else if (name == "gemini") {
    p.program = "gemini";
    p.args = {"--output-format", "json", "--approval-mode", "auto_edit",
              "-p", "{prompt}"};
    p.format = cli_output_format::gemini_json;
    p.allowed_paths = {".gemini/"};
  } else if (name == "aider") {
    p.program = "aider";
    p.args = {"--yes-always", "--no-git", "--message-file", "{prompt_file}",
              "kernel.cpp"};
    p.format = cli_output_format::aider_text;
    p.allowed_paths = {".aider*"};
  } else if (name == "custom") {
    p.format = cli_output_format::plain;
  } else {
    return make_error(error::invalid_config,
                      "agents.cli: unknown preset '" + name
                        + "' (claude, codex, gemini, aider or custom)");
  }
  return p;
}

std::vector<std::string>
expand_args(const std::vector<std::string>& args,
            const std::map<std::string, std::string>& values) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    std::string result;
    size_t i = 0;
    while (i < arg.size()) {
      auto open = arg.find('{', i);
      auto close = open == std::string::npos ? open : arg.find('}', open);
      if (close == std::string::npos) {
        result.append(arg, i, std::string::npos);
        break;
      }
      auto key = arg.substr(open + 1, close - open - 1);
      result.append(arg, i, open - i);
      auto hit = values.find(key);
      if (hit != values.end()) {
        result += hit->second;
        i = close + 1;
      } else {
        result += '{';
        i = open + 1;
      }
    }
    out.push_back(std::move(result));
  }
  return out;
}

void usage_parser::feed_line(std::string_view line) {
  switch (format_) {
    case cli_output_format::claude_stream_json:
      return feed_claude(line);
    case cli_output_format::codex_jsonl:
      return feed_codex(line);
    case cli_output_format::aider_text:
      return feed_aider(line);
    case cli_output_format::gemini_json:
    case cli_output_format::plain:
      return;
  }
}

void usage_parser::finish(std::string_view output) {
  if (format_ == cli_output_format::gemini_json)
    finish_gemini(output);
  else if (format_ == cli_output_format::aider_text
           || format_ == cli_output_format::plain)
    final_message_ = std::string{output};
}

void usage_parser::note_error(std::string_view text) {
  if (text.empty())
    return;
  if (!errors_.empty())
    errors_ += "\n";
  errors_.append(text.substr(0, 4096));
}

void usage_parser::feed_claude(std::string_view line) {
  auto ev = parse_json(line);
  auto type = string_of(ev, "type");
  if (type == "assistant" && !claude_result_seen_) {
    const auto& msg = member(ev, "message");
    if (msg.contains("usage")) {
      // Each content block of one message repeats the message's usage:
      // keep the latest per message id instead of adding them up.
      claude_messages_[string_of(msg, "id")] = claude_usage(member(msg, "usage"));
      token_usage sum;
      for (const auto& [id, u] : claude_messages_)
        add_usage(sum, u);
      usage_ = sum;
    }
    if (auto text = message_text(msg); !text.empty())
      final_message_ = text;
  } else if (type == "result") {
    claude_result_seen_ = true;
    if (ev.contains("usage"))
      usage_ = claude_usage(member(ev, "usage"));
    if (const auto& cost = member(ev, "total_cost_usd"); cost.is_number())
      usage_.cost_usd = cost.get<double>();
    if (auto text = string_of(ev, "result"); !text.empty())
      final_message_ = text;
    if (member(ev, "is_error") == json(true))
      note_error(string_of(ev, "result") + " " + string_of(ev, "subtype"));
  }
}

void usage_parser::feed_codex(std::string_view line) {
  auto ev = parse_json(line);
  auto type = string_of(ev, "type");
  if (type == "turn.completed" && ev.contains("usage")) {
    const auto& u = member(ev, "usage");
    // Codex's input_tokens include the cached ones, and its output_tokens
    // include the reasoning ones (codex-rs TokenUsage::blended_total).
    auto cached = count_of(u, "cached_input_tokens");
    auto reasoning = count_of(u, "reasoning_output_tokens");
    token_usage t;
    t.cache_read = cached;
    auto input = count_of(u, "input_tokens");
    auto output = count_of(u, "output_tokens");
    t.input = input - std::min(cached, input);
    t.reasoning = reasoning;
    t.output = output - std::min(reasoning, output);
    add_usage(usage_, t);
  } else if (type == "item.completed") {
    const auto& item = member(ev, "item");
    if (string_of(item, "type") == "agent_message")
      final_message_ = string_of(item, "text");
  } else if (type == "turn.failed") {
    note_error(string_of(member(ev, "error"), "message"));
  } else if (type == "error") {
    note_error(string_of(ev, "message"));
  }
}

void usage_parser::feed_aider(std::string_view line) {
  // "Tokens: 4.2k sent, 1k cache write, 2k cache hit, 512 received.
  //  Cost: $0.01 message, $0.03 session."
  static const std::regex tokens_re{R"(^Tokens:\s)"};
  static const std::regex part_re{
    R"(([0-9]+(?:\.[0-9]+)?)([kKmM]?) (sent|cache write|cache hit|received))"};
  static const std::regex session_re{R"(\$([0-9]+(?:\.[0-9]+)?) session)"};
  std::string text{line};
  if (!std::regex_search(text, tokens_re))
    return;
  token_usage t;
  for (std::sregex_iterator i{text.begin(), text.end(), part_re}, end; i != end; ++i) {
    auto n = aider_count((*i)[1], (*i)[2]);
    auto what = (*i)[3].str();
    if (what == "sent")
      t.input = n;
    else if (what == "cache write")
      t.cache_write = n;
    else if (what == "cache hit")
      t.cache_read = n;
    else
      t.output = n;
  }
  auto cost = usage_.cost_usd;
  add_usage(usage_, t);
  usage_.cost_usd = cost;
  std::smatch m;
  if (std::regex_search(text, m, session_re))
    usage_.cost_usd = std::strtod(m[1].str().c_str(), nullptr);
}

void usage_parser::finish_gemini(std::string_view output) {
  // The object may follow log lines: try each line that opens with '{'.
  json doc;
  for (size_t at = 0; at < output.size() && !doc.is_object();) {
    if (output[at] == '{')
      doc = parse_json(output.substr(at));
    auto nl = output.find('\n', at);
    at = nl == std::string_view::npos ? output.size() : nl + 1;
  }
  if (!doc.is_object())
    return;
  final_message_ = string_of(doc, "response");
  note_error(string_of(member(doc, "error"), "message"));
  const auto& models = member(member(doc, "stats"), "models");
  if (!models.is_object())
    return;
  token_usage sum;
  for (const auto& [name, model] : models.items()) {
    const auto& tok = member(model, "tokens");
    // Gemini's prompt count includes the cached tokens.
    auto prompt
      = saturating_add(count_of(tok, "prompt"), count_of(tok, "tool"));
    token_usage t;
    t.cache_read = std::min(count_of(tok, "cached"), prompt);
    t.input = prompt - t.cache_read;
    t.output = count_of(tok, "candidates");
    t.reasoning = count_of(tok, "thoughts");
    add_usage(sum, t);
  }
  usage_ = sum;
}

std::optional<std::string> last_cpp_block(std::string_view text) {
  std::optional<std::string> last;
  std::string body;
  bool in_block = false;
  bool wanted = false;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    auto t = trim(line);
    if (!in_block && t.rfind("```", 0) == 0) {
      auto tag = lower(trim(std::string_view{t}.substr(3)));
      in_block = true;
      wanted = tag.empty() || tag == "cpp" || tag == "c++";
      body.clear();
    } else if (in_block && t == "```") {
      in_block = false;
      if (wanted)
        last = body;
    } else if (in_block) {
      body.append(line);
      body += '\n';
    }
  }
  return last;
}

bool is_retryable(std::string_view text) {
  // A status code only where it reads as one: after "HTTP", "status",
  // "error" or "code", or before a reason phrase. Any 429 or 5xx matched
  // before, and a CLI that printed "512 registers" was retried twice.
  static const std::regex status_re{
    R"(\b(http(/[0-9.]+)?|status|error|code)\W{0,3}(429|5[0-9][0-9])\b)"
    R"(|\b(429|5[0-9][0-9])\W{1,3}(too many|internal server|bad gateway)"
    R"(|service unavailable|gateway time))"};
  auto low = lower(text);
  for (const char* word : {"rate limit", "rate_limit", "ratelimit",
                           "too many requests", "overloaded"})
    if (low.find(word) != std::string::npos)
      return true;
  return std::regex_search(low, status_re);
}

} // namespace eat
