// Specification of the http agent against a loopback server that replays
// recorded responses of both API styles: candidates, normalised usage,
// retries (with the delays computed but not slept), failures, budgets, and
// the fail-fast check.

#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/agent/http_agent.hpp"
#include "actors/protocol/error.hpp"
#include "actors/protocol/type_ids.hpp"
#include "tests/actors/agent/replay_server.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;
using std::chrono::milliseconds;

namespace {

const std::string baseline = "extern \"C\" void kernel(const float* a, "
                             "const float* b, float* c, int n) {\n"
                             "  for (int i = 0; i < n; ++i)\n"
                             "    c[i] = a[i] + b[i];\n"
                             "}\n";

assignment sample_assignment() {
  assignment a;
  a.team = "t1";
  a.agent = "t1.a1";
  a.role = "explorer";
  a.strategy = "local";
  a.task.name = "vadd";
  a.task.kind = "gemm";
  a.task.dtype = "float32";
  a.task.baseline_source = baseline;
  a.task.workloads.emplace_back();
  a.task.workloads[0].name = "n1024";
  a.task.workloads[0].axes = {{"n", 1024}};
  a.seed = 42;
  return a;
}

/// An agent pointed at a replay server, with a template folder and a sleep
/// that records the delays instead of waiting.
struct fixture {
  test::replay_server server;
  test::temp_dir prompts;
  std::vector<milliseconds> delays;
  http_agent_options opts;

  explicit fixture(api_style style = api_style::openai, bool stream = false) {
    std::ofstream{prompts.path() / "explorer.md"}
      << "Task {{task}} as {{role}}; parent {{parent_id}}:\n{{parent}}\n"
         "History:\n{{history}}\n";
    opts.style = style;
    opts.stream = stream;
    opts.base_url = server.base_url();
    opts.model = "test-model";
    opts.prompts_dir = prompts.path();
    opts.retry.attempts = 3;
    opts.retry.base_delay = milliseconds{0};
    opts.sleep = [this](milliseconds d) {
      delays.push_back(d);
    };
  }

  void enqueue(const std::string& name) {
    server.enqueue(test::load_recorded(name));
  }
};

} // namespace

TEST_CASE("an OpenAI reply gives a custom candidate and normalised usage") {
  fixture f;
  f.opts.prices = {2.0, 0.5, 0.0, 8.0};
  f.enqueue("openai_chat.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  REQUIRE(reply.candidates.size() == 1);
  const auto& c = reply.candidates[0];
  CHECK(c.family == "custom");
  CHECK(c.parent == "");
  CHECK(c.team == "t1");
  CHECK(c.agent == "t1.a1");
  CHECK(c.task == "vadd");
  CHECK_THAT(c.source, Catch::StartsWith("extern \"C\" void kernel(const "
                                         "float* a, const float* b"));
  CHECK_THAT(c.source, Catch::Contains("// blocked"));
  CHECK(reply.usage.input == 476);
  CHECK(reply.usage.cache_read == 1024);
  CHECK(reply.usage.output == 292);
  CHECK(reply.usage.reasoning == 128);
  CHECK(reply.tokens == 1920);
  CHECK(reply.usage.cost_usd
        == Approx((476 * 2.0 + 1024 * 0.5 + (292 + 128) * 8.0) / 1e6));
  CHECK_THAT(reply.transcript, Catch::Contains("Blocking the loops"));
  auto reqs = f.server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].method == "POST");
  CHECK(reqs[0].path == "/v1/chat/completions");
  auto body = nlohmann::json::parse(reqs[0].body);
  CHECK(body["model"] == "test-model");
  CHECK(body["stream"] == false);
  std::string user = body["messages"][1]["content"];
  CHECK_THAT(user, Catch::StartsWith("Task vadd as explorer; parent baseline"));
  CHECK_THAT(user, Catch::Contains(baseline));
  CHECK_THAT(user, Catch::Contains("SEARCH/REPLACE"));
}

TEST_CASE("an OpenAI stream gives the text and the usage of its last chunk") {
  fixture f{api_style::openai, true};
  f.enqueue("openai_chat_stream.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  REQUIRE(reply.candidates.size() == 1);
  CHECK(reply.candidates[0].source
        == "extern \"C\" void kernel(const float* a, float* c) {\n"
           "  c[0] = a[0];\n}\n");
  CHECK(reply.usage.input == 388);
  CHECK(reply.usage.cache_read == 512);
  CHECK(reply.usage.output == 60);
  CHECK(reply.tokens == 960);
  auto body = nlohmann::json::parse(f.server.requests().at(0).body);
  CHECK(body["stream_options"]["include_usage"] == true);
}

TEST_CASE("an Anthropic reply is read with its cache usage") {
  fixture f{api_style::anthropic, false};
  setenv("EAT_TEST_ANTHROPIC_KEY", "sk-test-1", 1);
  f.opts.api_key_env = "EAT_TEST_ANTHROPIC_KEY";
  f.enqueue("anthropic_messages.http");
  auto a = sample_assignment();
  a.parent = {"c000003", "baseline", {}, eval_status::passed, 1.0};
  auto reply = http_reply(a, f.opts);
  CHECK(reply.failure == "");
  REQUIRE(reply.candidates.size() == 1);
  CHECK(reply.candidates[0].parent == "c000003");
  CHECK(reply.candidates[0].source
        == "extern \"C\" void kernel(const float* a, float* c) {\n"
           "  c[0] = 2 * a[0];\n}\n");
  CHECK(reply.usage.input == 320);
  CHECK(reply.usage.cache_read == 4096);
  CHECK(reply.usage.cache_write == 2048);
  CHECK(reply.usage.output == 250);
  CHECK(reply.tokens == 320 + 4096 + 2048 + 250);
  auto req = f.server.requests().at(0);
  CHECK(req.path == "/v1/messages");
  CHECK(req.headers["x-api-key"] == "sk-test-1");
  CHECK(req.headers["anthropic-version"] == "2023-06-01");
  CHECK(req.headers.count("authorization") == 0);
  auto body = nlohmann::json::parse(req.body);
  CHECK_THAT(body["system"].get<std::string>(), Catch::Contains("explorer"));
}

TEST_CASE("an Anthropic stream merges message_start and message_delta "
          "usage") {
  fixture f{api_style::anthropic, true};
  f.enqueue("anthropic_messages_stream.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  REQUIRE(reply.candidates.size() == 1);
  CHECK(reply.candidates[0].source
        == "extern \"C\" void kernel(float* c) {\n  c[0] = 1;\n}\n");
  CHECK(reply.usage.input == 700);
  CHECK(reply.usage.cache_read == 1500);
  CHECK(reply.usage.output == 95);
}

TEST_CASE("SEARCH/REPLACE edits are applied to the parent") {
  fixture f;
  f.enqueue("openai_search_replace.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  REQUIRE(reply.candidates.size() == 1);
  CHECK(reply.candidates[0].source
        == "extern \"C\" void kernel(const float* a, const float* b, "
           "float* c, int n) {\n"
           "  for (int i = 0; i < n; i += 2) {\n"
           "    c[i] = a[i] + b[i];\n"
           "    c[i + 1] = a[i + 1] + b[i + 1];\n"
           "  }\n"
           "}\n");
  CHECK(reply.usage.input == 800); // prompt_tokens_details: null
  CHECK(reply.usage.output == 100);
}

TEST_CASE("a 429 with retry-after is retried after the delay it asks for") {
  fixture f;
  f.opts.retry.base_delay = milliseconds{10};
  f.enqueue("openai_429_retry_after.http");
  f.enqueue("openai_chat.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  CHECK(reply.candidates.size() == 1);
  CHECK(f.server.requests().size() == 2);
  CHECK(f.delays == std::vector<milliseconds>{milliseconds{2000}});
  CHECK_THAT(reply.transcript, Catch::Contains("retrying in 2000 ms"));
}

TEST_CASE("retry-after-ms is honoured before retry-after") {
  fixture f;
  f.enqueue("openai_429_retry_after_ms.http");
  f.enqueue("openai_chat.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  CHECK(f.delays == std::vector<milliseconds>{milliseconds{1500}});
}

TEST_CASE("a 529 overloaded reply is retried") {
  fixture f{api_style::anthropic, false};
  f.enqueue("anthropic_529_overloaded.http");
  f.enqueue("anthropic_messages.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  CHECK(reply.candidates.size() == 1);
  CHECK(f.server.requests().size() == 2);
  CHECK(f.delays.size() == 1);
}

TEST_CASE("an error event in a stream is retried") {
  fixture f{api_style::anthropic, true};
  f.enqueue("anthropic_stream_overloaded.http");
  f.enqueue("anthropic_messages_stream.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  CHECK(reply.candidates.size() == 1);
  CHECK(f.server.requests().size() == 2);
}

TEST_CASE("a dropped connection is retried") {
  fixture f;
  f.server.enqueue(test::recorded_response{0, "", {}, ""});
  f.enqueue("openai_chat.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.failure == "");
  CHECK(f.server.requests().size() == 2);
}

TEST_CASE("a 400 is not retried and its failure quotes the server") {
  fixture f;
  f.enqueue("openai_400.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.candidates.empty());
  CHECK_THAT(reply.failure, Catch::StartsWith("HTTP 400: "));
  CHECK_THAT(reply.failure, Catch::Contains("Use 'max_completion_tokens'"));
  CHECK_THAT(reply.failure, Catch::EndsWith("(not retried)"));
  CHECK(f.server.requests().size() == 1);
  CHECK(f.delays.empty());
}

TEST_CASE("a 429 for insufficient quota is not retried") {
  fixture f;
  f.enqueue("openai_429_insufficient_quota.http");
  f.enqueue("openai_chat.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.candidates.empty());
  CHECK_THAT(reply.failure, Catch::StartsWith("spend limit reached"));
  CHECK(f.server.requests().size() == 1);
}

TEST_CASE("a 500 is retried up to the attempts, then fails") {
  fixture f;
  f.opts.retry.base_delay = milliseconds{100};
  for (int i = 0; i < 4; ++i)
    f.enqueue("proxy_500.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.candidates.empty());
  CHECK(reply.failure
        == "HTTP 500: upstream connect error or disconnect/reset before "
           "headers. reset reason: connection termination (gave up after 3 "
           "attempts)");
  CHECK(f.server.requests().size() == 3);
  REQUIRE(f.delays.size() == 2);
  CHECK(f.delays[0] >= milliseconds{50});
  CHECK(f.delays[0] <= milliseconds{100});
  CHECK(f.delays[1] >= milliseconds{100});
  CHECK(f.delays[1] <= milliseconds{200});
}

TEST_CASE("repeated 429s end in a rate-limited failure") {
  fixture f;
  f.opts.retry.attempts = 2;
  f.enqueue("openai_429_retry_after.http");
  f.enqueue("openai_429_retry_after.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK_THAT(reply.failure, Catch::StartsWith("rate limited (429) after 2 "
                                              "attempts: HTTP 429"));
}

TEST_CASE("a reply without code is a failure that still counts its tokens") {
  fixture f;
  f.enqueue("openai_no_code.http");
  auto reply = http_reply(sample_assignment(), f.opts);
  CHECK(reply.candidates.empty());
  CHECK(reply.failure == "no kernel in reply");
  CHECK(reply.tokens == 615);
}

TEST_CASE("the token budget caps max_tokens and flags an overspent reply") {
  fixture f;
  f.enqueue("openai_chat.http");
  auto a = sample_assignment();
  a.token_budget = 1500;
  f.opts.min_output_tokens = 100;
  auto reply = http_reply(a, f.opts);
  auto body = nlohmann::json::parse(f.server.requests().at(0).body);
  CHECK(body["max_tokens"].get<uint64_t>() < 1500);
  CHECK(body["max_tokens"].get<uint64_t>() >= 100);
  CHECK(reply.candidates.size() == 1); // kept, but flagged
  CHECK(reply.failure == "over token budget: used 1920 of 1500 tokens");
}

TEST_CASE("a budget smaller than the prompt sends no request") {
  fixture f;
  auto a = sample_assignment();
  a.token_budget = 50;
  auto reply = http_reply(a, f.opts);
  CHECK_THAT(reply.failure, Catch::StartsWith("over token budget: the prompt "
                                              "needs about"));
  CHECK(f.server.requests().empty());
}

TEST_CASE("a missing role template or API key is a failure without a "
          "request") {
  fixture f;
  auto a = sample_assignment();
  a.role = "reviewer";
  auto reply = http_reply(a, f.opts);
  CHECK_THAT(reply.failure, Catch::Contains("no prompt template for role "
                                            "'reviewer'"));
  f.opts.api_key_env = "EAT_TEST_UNSET_KEY_VARIABLE";
  unsetenv("EAT_TEST_UNSET_KEY_VARIABLE");
  auto no_key = http_reply(sample_assignment(), f.opts);
  CHECK(no_key.failure
        == "agents.http: environment variable "
           "EAT_TEST_UNSET_KEY_VARIABLE (api_key_env) is not "
           "set");
  CHECK(f.server.requests().empty());
}

TEST_CASE("check_http_agent accepts a listening server") {
  fixture f;
  CHECK(check_http_agent(f.opts));
}

TEST_CASE("check_http_agent names a closed port") {
  // A bound socket that does not listen: connecting to it is refused.
  test::closed_port closed;
  http_agent_options opts;
  opts.base_url = "http://127.0.0.1:" + std::to_string(closed.port());
  opts.model = "m";
  auto ok = check_http_agent(opts);
  REQUIRE(!ok);
  CHECK(render(ok.error())
        == "agent_failed: agents.http: cannot connect to 127.0.0.1:"
             + std::to_string(closed.port()) + " (Connection refused)");
}

TEST_CASE("check_http_agent names a bad URL, a missing model or key") {
  http_agent_options opts;
  opts.base_url = "127.0.0.1:8000";
  opts.model = "m";
  auto bad = check_http_agent(opts);
  REQUIRE(!bad);
  CHECK_THAT(render(bad.error()), Catch::Contains("agents.http: base_url"));
  opts.base_url = "http://127.0.0.1:8000";
  opts.model = "";
  CHECK_THAT(
    render(check_http_agent(opts).error()), Catch::Contains("no model"));
  opts.model = "m";
  opts.api_key_env = "EAT_TEST_UNSET_KEY_VARIABLE";
  unsetenv("EAT_TEST_UNSET_KEY_VARIABLE");
  CHECK_THAT(render(check_http_agent(opts).error()),
    Catch::Contains("EAT_TEST_UNSET_KEY_VARIABLE"));
}

TEST_CASE("the http agent actor answers a propose request") {
  fixture f;
  f.enqueue("openai_chat.http");
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::eat>();
  caf::actor_system sys{cfg};
  auto agent = sys.spawn<caf::detached>(http_agent, f.opts);
  caf::scoped_actor self{sys};
  agent_reply reply;
  self->request(agent, caf::infinite, propose_atom_v, sample_assignment())
    .receive(
      [&](const agent_reply& x) {
        reply = x;
      },
      [&](const caf::error& err) {
        FAIL(sys.render(err));
      });
  CHECK(reply.candidates.size() == 1);
  CHECK(reply.tokens == 1920);
  self->send_exit(agent, caf::exit_reason::user_shutdown);
}
