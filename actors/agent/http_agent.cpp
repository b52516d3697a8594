#include "actors/agent/http_agent.hpp"

#include <cstdlib>
#include <random>
#include <thread>
#include <variant>

#include "actors/agent/prompt.hpp"
#include "actors/agent/reply_edits.hpp"
#include "actors/protocol/error.hpp"

namespace eat {

namespace {

using std::chrono::milliseconds;

/// The text of `err` without its "code: " prefix.
std::string message_of(const caf::error& err) {
  auto text = render(err);
  auto prefix = to_string(code_of(err)) + ": ";
  return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
}

/// The endpoint URL: base_url without a trailing "/" or "/v1", plus the
/// style's path.
std::string endpoint(const http_agent_options& opts) {
  auto base = opts.base_url;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0)
    base.resize(base.size() - 3);
  return base + api_path(opts.style);
}

caf::expected<std::string> api_key(const http_agent_options& opts) {
  if (opts.api_key_env.empty())
    return std::string{};
  const char* key = std::getenv(opts.api_key_env.c_str());
  if (key == nullptr || *key == '\0')
    return make_error(error::invalid_config,
      "agents.http: environment variable " + opts.api_key_env
        + " (api_key_env) is not set");
  return std::string{key};
}

/// What one attempt gave, and the delay the server asked for.
struct attempt_outcome {
  std::variant<llm_result, call_failure> value;
  std::optional<milliseconds> asked;
};

std::variant<llm_result, call_failure> parse_success(
  const llm_request& req, const http_response& res, sse_parser& parser) {
  auto type = res.headers.count("content-type") != 0
                ? res.headers.at("content-type")
                : std::string{};
  if (!req.stream || type.find("application/json") != std::string::npos) {
    auto parsed = parse_reply(req.style, res.body);
    if (!parsed)
      return call_failure{message_of(parsed.error()), false, res.status};
    return std::move(*parsed);
  }
  return parser.finish();
}

attempt_outcome attempt(const http_request& http, const llm_request& req) {
  sse_parser parser{req.style};
  auto res = http_post(http, [&](std::string_view piece) {
    if (req.stream)
      parser.feed(piece);
  });
  if (!res)
    return {call_failure{message_of(res.error()), true, 0}, std::nullopt};
  if (res->status >= 200 && res->status < 300)
    return {parse_success(req, *res, parser), std::nullopt};
  return {classify_failure(res->status, res->body), retry_after(res->headers)};
}

std::string gave_up(const call_failure& f, uint32_t attempts) {
  if (!f.retryable)
    return f.message + " (not retried)";
  auto n = std::to_string(attempts) + " attempt" + (attempts == 1 ? "" : "s");
  if (f.status == 429)
    return "rate limited (429) after " + n + ": " + f.message;
  return f.message + " (gave up after " + n + ")";
}

/// Sends the request, retrying as opts.retry says; notes each attempt in
/// `log`.
std::variant<llm_result, call_failure> call_with_retries(
  const http_agent_options& opts, const http_request& http,
  const llm_request& req, uint64_t seed, std::string& log) {
  std::mt19937_64 rng{seed};
  auto attempts = std::max<uint32_t>(1, opts.retry.attempts);
  std::optional<milliseconds> asked;
  for (uint32_t i = 1;; ++i) {
    if (i > 1) {
      auto delay = backoff_delay(opts.retry, i, asked, rng);
      log += "retrying in " + std::to_string(delay.count()) + " ms\n";
      if (opts.sleep)
        opts.sleep(delay);
      else
        std::this_thread::sleep_for(delay);
    }
    auto out = attempt(http, req);
    if (auto* ok = std::get_if<llm_result>(&out.value)) {
      log += "attempt " + std::to_string(i) + ": ok\n";
      return std::move(*ok);
    }
    auto& failed = std::get<call_failure>(out.value);
    log += "attempt " + std::to_string(i) + ": " + failed.message + "\n";
    if (opts.halt != nullptr && opts.halt->load())
      failed.retryable = false;
    if (!failed.retryable || i >= attempts) {
      failed.message = gave_up(failed, i);
      return failed;
    }
    asked = out.asked;
  }
}

std::string usage_line(const token_usage& u) {
  return "usage: input " + std::to_string(u.input) + ", cache_read "
         + std::to_string(u.cache_read) + ", cache_write "
         + std::to_string(u.cache_write) + ", output "
         + std::to_string(u.output) + ", reasoning "
         + std::to_string(u.reasoning) + ", cost $" + std::to_string(u.cost_usd)
         + "\n";
}

/// The prompt and the output-token limit for `a`, or why there is none.
struct prepared {
  prompt_text prompt;
  std::string parent;
  uint64_t max_tokens = 0;
};

caf::expected<prepared> prepare(
  const assignment& a, const http_agent_options& opts) {
  prepared p;
  auto source = opts.source_of ? opts.source_of(a) : parent_source(a);
  if (!source)
    return source.error();
  p.parent = std::move(*source);
  auto role_template = load_role_template(opts.prompts_dir, a.role);
  if (!role_template)
    return role_template.error();
  auto prompt = render_prompt(*role_template, a, p.parent, opts.history_rows);
  if (!prompt)
    return prompt.error();
  p.prompt = std::move(*prompt);
  p.max_tokens = opts.max_tokens;
  if (a.token_budget > 0) {
    auto need
      = estimate_tokens(p.prompt.system) + estimate_tokens(p.prompt.user);
    auto left = a.token_budget > need ? a.token_budget - need : 0;
    if (left < std::min(opts.min_output_tokens, opts.max_tokens))
      return make_error(error::agent_failed,
        "over token budget: the prompt needs about " + std::to_string(need)
          + " tokens, " + std::to_string(a.token_budget) + " left");
    p.max_tokens = std::min(p.max_tokens, left);
  }
  return p;
}

/// Fills reply.candidates or reply.failure from the model's answer.
void take_answer(const assignment& a, const prepared& p,
  const llm_result& answer, agent_reply& reply) {
  auto source = kernel_from_reply(p.parent, answer.text);
  if (!source) {
    reply.failure = message_of(source.error());
    if (answer.finish_reason == "length"
        || answer.finish_reason == "max_tokens")
      reply.failure += " (the reply was cut off at max_tokens = "
                       + std::to_string(p.max_tokens) + ")";
    return;
  }
  candidate c;
  c.team = a.team;
  c.agent = a.agent;
  c.task = a.task.name;
  c.family = "custom";
  c.parent = a.parent.id;
  c.source = std::move(*source);
  c.tokens = reply.tokens;
  reply.candidates.push_back(std::move(c));
}

llm_request make_request(const http_agent_options& opts, const prepared& p) {
  llm_request req;
  req.style = opts.style;
  req.model = opts.model;
  req.system = p.prompt.system;
  req.user = p.prompt.user;
  req.max_tokens = p.max_tokens;
  req.max_completion_tokens = opts.max_completion_tokens;
  req.temperature = opts.temperature;
  req.stream = opts.stream;
  return req;
}

/// The first lines of the transcript: who asked what, where.
std::string summary(const assignment& a, const http_agent_options& opts,
  const std::string& url, const llm_request& req) {
  return "http agent " + a.agent + " (role " + a.role + ", strategy "
         + a.strategy + "): " + to_string(opts.style) + " " + url + ", model "
         + opts.model + ", max_tokens " + std::to_string(req.max_tokens)
         + (opts.stream ? ", streaming" : "") + "\nprompt: system "
         + std::to_string(req.system.size()) + " bytes, user "
         + std::to_string(req.user.size()) + " bytes\n";
}

} // namespace

caf::expected<void> check_http_agent(const http_agent_options& opts) {
  auto url = parse_url(opts.base_url);
  if (!url)
    return make_error(error::invalid_config,
      "agents.http: base_url: " + message_of(url.error()));
  if (opts.model.empty())
    return make_error(error::invalid_config, "agents.http: no model");
  if (auto key = api_key(opts); !key)
    return key.error();
  std::error_code ec;
  if (!opts.prompts_dir.empty()
      && !std::filesystem::is_directory(opts.prompts_dir, ec))
    return make_error(error::invalid_config, "agents.http: prompts folder "
                                               + opts.prompts_dir.string()
                                               + " does not exist");
  auto timeout = std::min(opts.connect_timeout, milliseconds{5000});
  if (auto ok = check_tcp_connect(url->host, url->port, timeout); !ok)
    return make_error(
      error::agent_failed, "agents.http: " + message_of(ok.error()));
  return {};
}

agent_reply http_reply(const assignment& a, const http_agent_options& opts) {
  agent_reply reply;
  auto key = api_key(opts);
  auto p = key ? prepare(a, opts) : caf::expected<prepared>{key.error()};
  if (!p) {
    reply.failure = message_of(p.error());
    reply.transcript = "http agent " + a.agent + ": " + reply.failure + "\n";
    return reply;
  }
  auto req = make_request(opts, *p);
  http_request http{endpoint(opts), api_headers(opts.style, *key),
    request_body(req), opts.connect_timeout, opts.timeout, opts.idle_timeout};
  http.halt = opts.halt.get();
  auto& log = reply.transcript;
  log = summary(a, opts, http.url, req);
  auto out = call_with_retries(opts, http, req, a.seed, log);
  if (auto* failed = std::get_if<call_failure>(&out)) {
    reply.failure = failed->message;
    return reply;
  }
  auto& answer = std::get<llm_result>(out);
  reply.usage = answer.usage;
  reply.usage.cost_usd = cost_usd(answer.usage, opts.prices);
  reply.tokens = total_tokens(reply.usage);
  log += usage_line(reply.usage) + "--- reply ---\n" + answer.text + "\n";
  take_answer(a, *p, answer, reply);
  if (a.token_budget > 0 && reply.tokens > a.token_budget
      && reply.failure.empty())
    reply.failure = "over token budget: used " + std::to_string(reply.tokens)
                    + " of " + std::to_string(a.token_budget) + " tokens";
  return reply;
}

agent_actor::behavior_type http_agent(
  agent_actor::pointer, http_agent_options opts) {
  return {
    [opts](propose_atom, const assignment& a) -> agent_reply {
      return http_reply(a, opts);
    },
  };
}

caf::expected<std::string> complete_prompt(const http_agent_options& opts,
                                           const std::string& system,
                                           const std::string& user) {
  auto key = api_key(opts);
  if (!key)
    return key.error();
  llm_request req;
  req.style = opts.style;
  req.model = opts.model;
  req.system = system;
  req.user = user;
  req.max_tokens = opts.max_tokens;
  req.max_completion_tokens = opts.max_completion_tokens;
  req.temperature = opts.temperature;
  req.stream = opts.stream;
  http_request http;
  http.url = endpoint(opts);
  http.headers = api_headers(opts.style, *key);
  http.body = request_body(req);
  http.connect_timeout = opts.connect_timeout;
  http.total_timeout = opts.timeout;
  http.idle_timeout = opts.idle_timeout;
  std::string log;
  auto out = call_with_retries(opts, http, req, 1, log);
  if (auto* failed = std::get_if<call_failure>(&out))
    return make_error(error::agent_failed, failed->message);
  return std::get<llm_result>(out).text;
}

} // namespace eat
