// Specification of the two chat API styles as plain functions: request
// bodies, reply and stream parsing with normalised usage, error
// classification, retry-after headers and backoff delays.

#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "actors/agent/llm_api.hpp"
#include "tests/actors/agent/replay_server.hpp"

using namespace eat;
using std::chrono::milliseconds;

namespace {

llm_request sample_request(api_style style, bool stream) {
  llm_request req;
  req.style = style;
  req.model = "m";
  req.system = "sys";
  req.user = "usr";
  req.max_tokens = 777;
  req.stream = stream;
  return req;
}

llm_result finish_ok(sse_parser& p) {
  auto out = p.finish();
  if (auto* f = std::get_if<call_failure>(&out))
    FAIL("stream failed: " << f->message);
  return std::get<llm_result>(out);
}

} // namespace

TEST_CASE("openai request bodies carry both messages, the limit and stream "
          "options") {
  auto j = nlohmann::json::parse(
    request_body(sample_request(api_style::openai, true)));
  CHECK(j["model"] == "m");
  CHECK(j["messages"][0]["role"] == "system");
  CHECK(j["messages"][0]["content"] == "sys");
  CHECK(j["messages"][1]["role"] == "user");
  CHECK(j["max_tokens"] == 777);
  CHECK(j["stream_options"]["include_usage"] == true);
  CHECK(!j.contains("temperature"));
  auto req = sample_request(api_style::openai, false);
  req.max_completion_tokens = true;
  req.temperature = 0.25;
  auto k = nlohmann::json::parse(request_body(req));
  CHECK(k["max_completion_tokens"] == 777);
  CHECK(!k.contains("max_tokens"));
  CHECK(!k.contains("stream_options"));
  CHECK(k["temperature"] == 0.25);
}

TEST_CASE("anthropic request bodies put the system prompt at the top level") {
  auto j = nlohmann::json::parse(
    request_body(sample_request(api_style::anthropic, false)));
  CHECK(j["system"] == "sys");
  CHECK(j["messages"].size() == 1);
  CHECK(j["messages"][0]["content"] == "usr");
  CHECK(j["max_tokens"] == 777);
  CHECK(j["stream"] == false);
  auto h = api_headers(api_style::anthropic, "k1");
  CHECK(std::count(h.begin(), h.end(),
          std::pair<std::string, std::string>{"x-api-key", "k1"})
        == 1);
  CHECK(
    std::count(h.begin(), h.end(),
      std::pair<std::string, std::string>{"anthropic-version", "2023-06-01"})
    == 1);
  auto o = api_headers(api_style::openai, "k2");
  CHECK(std::count(o.begin(), o.end(),
          std::pair<std::string, std::string>{"Authorization", "Bearer k2"})
        == 1);
}

TEST_CASE("openai usage excludes cached input and reasoning output") {
  auto r = parse_reply(
    api_style::openai, test::load_recorded("openai_chat.http").body);
  REQUIRE(r);
  CHECK(r->usage.input == 1500 - 1024);
  CHECK(r->usage.cache_read == 1024);
  CHECK(r->usage.cache_write == 0);
  CHECK(r->usage.output == 420 - 128);
  CHECK(r->usage.reasoning == 128);
  CHECK(total_tokens(r->usage) == 1920);
  CHECK(r->finish_reason == "stop");
}

TEST_CASE("absurd usage counts saturate: they never wrap under a budget") {
  // 2^64 - 1 prompt tokens wrapped the total to 8 (a run went on past its
  // budget); 1e300 became 0.
  auto r = parse_reply(api_style::openai,
    R"({"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":18446744073709551615,)"
    R"("completion_tokens":9}})");
  REQUIRE(r);
  CHECK(total_tokens(r->usage) == UINT64_MAX);
  r = parse_reply(api_style::openai,
    R"({"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":1e300,"completion_tokens":-5}})");
  REQUIRE(r);
  CHECK(r->usage.input == UINT64_MAX);
  CHECK(r->usage.output == 0);
  token_usage sum;
  add_usage(sum, r->usage);
  add_usage(sum, r->usage);
  CHECK(sum.input == UINT64_MAX);
  CHECK(saturating_add(UINT64_MAX - 1, 5) == UINT64_MAX);
  CHECK(token_count(std::nan("")) == 0);
}

TEST_CASE("anthropic usage is taken as reported") {
  auto r = parse_reply(
    api_style::anthropic, test::load_recorded("anthropic_messages.http").body);
  REQUIRE(r);
  CHECK(r->usage.input == 320);
  CHECK(r->usage.cache_read == 4096);
  CHECK(r->usage.cache_write == 2048);
  CHECK(r->usage.output == 250);
  CHECK(r->finish_reason == "end_turn");
  CHECK_THAT(r->text, Catch::StartsWith("Vectorised"));
}

TEST_CASE("malformed replies are failures, not empty results") {
  CHECK(!parse_reply(api_style::openai, "<html>bad gateway</html>"));
  CHECK(!parse_reply(api_style::openai, R"({"choices":[]})"));
  CHECK(!parse_reply(api_style::anthropic, R"({"id":"x"})"));
}

TEST_CASE("a stream fed one byte at a time parses like a whole one") {
  auto body = test::load_recorded("openai_chat_stream.http").body;
  sse_parser whole{api_style::openai};
  whole.feed(body);
  sse_parser bytes{api_style::openai};
  for (char c : body)
    bytes.feed(std::string_view{&c, 1});
  auto a = finish_ok(whole);
  auto b = finish_ok(bytes);
  CHECK(a.text == b.text);
  CHECK(a.text.find("Unrolled by four.") == 0);
  CHECK(b.usage.input == 900 - 512);
  CHECK(b.usage.cache_read == 512);
  CHECK(b.usage.output == 60);
  CHECK(b.finish_reason == "stop");
}

TEST_CASE("anthropic streams merge usage from message_start and "
          "message_delta") {
  sse_parser p{api_style::anthropic};
  p.feed(test::load_recorded("anthropic_messages_stream.http").body);
  auto r = finish_ok(p);
  CHECK(r.usage.input == 700);
  CHECK(r.usage.cache_read == 1500);
  CHECK(r.usage.output == 95);
  CHECK(r.finish_reason == "end_turn");
  CHECK(r.text
        == "Here it is.\n```cpp\nextern \"C\" void kernel(float* c) {\n"
           "  c[0] = 1;\n}\n```\n");
}

TEST_CASE("a stream error event or a cut stream is a retryable failure") {
  sse_parser p{api_style::anthropic};
  p.feed(test::load_recorded("anthropic_stream_overloaded.http").body);
  auto out = p.finish();
  REQUIRE(std::holds_alternative<call_failure>(out));
  CHECK(std::get<call_failure>(out).retryable);
  CHECK_THAT(
    std::get<call_failure>(out).message, Catch::Contains("overloaded_error"));
  sse_parser cut{api_style::openai};
  cut.feed("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n");
  auto cut_out = cut.finish();
  REQUIRE(std::holds_alternative<call_failure>(cut_out));
  CHECK_THAT(std::get<call_failure>(cut_out).message,
    Catch::Contains("before its end marker"));
}

TEST_CASE("errors are retried for 408, 409, 429, 5xx and 529 only") {
  for (long status : {408L, 409L, 429L, 500L, 502L, 503L, 529L})
    CHECK(classify_failure(status, "busy").retryable);
  for (long status : {400L, 401L, 403L, 404L, 422L})
    CHECK(!classify_failure(status, "no").retryable);
}

TEST_CASE("error messages quote the server in each error shape") {
  auto openai
    = classify_failure(400, test::load_recorded("openai_400.http").body);
  CHECK_THAT(openai.message,
    Catch::StartsWith("HTTP 400: invalid_request_error: Unsupported "
                      "parameter"));
  auto anthropic
    = classify_failure(401, test::load_recorded("anthropic_401.http").body);
  CHECK(
    anthropic.message == "HTTP 401: authentication_error: invalid x-api-key");
  auto proxy
    = classify_failure(500, test::load_recorded("proxy_500.http").body);
  CHECK_THAT(proxy.message, Catch::StartsWith("HTTP 500: upstream connect"));
}

TEST_CASE("a 429 for a spend or quota limit is not retried") {
  auto f = classify_failure(
    429, test::load_recorded("openai_429_insufficient_quota.http").body);
  CHECK(!f.retryable);
  CHECK_THAT(f.message, Catch::StartsWith("spend limit reached (HTTP 429)"));
  CHECK(!classify_failure(429, "monthly spend limit reached").retryable);
}

TEST_CASE("retry-after-ms wins over retry-after, which takes seconds or a "
          "date") {
  CHECK(retry_after({{"retry-after-ms", "1500"}, {"retry-after", "9"}})
        == milliseconds{1500});
  CHECK(retry_after({{"retry-after", "2"}}) == milliseconds{2000});
  CHECK(retry_after({{"retry-after", "0.5"}}) == milliseconds{500});
  auto now = std::chrono::system_clock::from_time_t(
    784111777); // 1994-11-06 08:49:37 UTC
  CHECK(retry_after({{"retry-after", "Sun, 06 Nov 1994 08:49:40 GMT"}}, now)
        == milliseconds{3000});
  CHECK(retry_after({{"retry-after", "soon"}}) == std::nullopt);
  CHECK(retry_after({}) == std::nullopt);
}

TEST_CASE("backoff doubles from the base delay with jitter, capped") {
  retry_policy policy{6, milliseconds{1000}, milliseconds{5000}};
  std::mt19937_64 rng{7};
  for (uint32_t next = 2; next <= 6; ++next) {
    auto full = std::min<int64_t>(1000 << (next - 2), 5000);
    auto d = backoff_delay(policy, next, std::nullopt, rng);
    CHECK(d.count() >= std::min<int64_t>(full / 2, 5000));
    CHECK(d.count() <= full);
  }
  CHECK(
    backoff_delay(policy, 2, milliseconds{2000}, rng) == milliseconds{2000});
  CHECK(
    backoff_delay(policy, 2, milliseconds{60000}, rng) == milliseconds{5000});
}

TEST_CASE("cost prices reasoning as output") {
  token_usage u{1'000'000, 2'000'000, 1'000'000, 500'000, 500'000, 0};
  llm_prices p{3.0, 0.3, 3.75, 15.0};
  CHECK(cost_usd(u, p) == Approx(3.0 + 0.6 + 3.75 + 15.0));
  CHECK(cost_usd(u, llm_prices{}) == 0);
}
