// Specification of complete_prompt (actors/agent/http_agent.hpp), the call
// the supervisor's llm policy makes through its planner: one prompt, the
// model's text back, with the http backend's retries and error handling.

#include <catch2/catch.hpp>

#include "actors/agent/http_agent.hpp"
#include "actors/protocol/error.hpp"
#include "tests/actors/agent/replay_server.hpp"

using namespace eat;
using std::chrono::milliseconds;

namespace {

http_agent_options planner_options(const test::replay_server& server) {
  http_agent_options opts;
  opts.base_url = server.base_url();
  opts.model = "planner-model";
  opts.stream = false;
  opts.retry.attempts = 2;
  opts.retry.base_delay = milliseconds{0};
  opts.sleep = [](milliseconds) {};
  return opts;
}

} // namespace

TEST_CASE("a prompt is sent as one chat request and the model's text comes "
          "back") {
  test::replay_server server;
  server.enqueue(test::load_recorded("openai_chat.http"));
  auto text = complete_prompt(planner_options(server), "You supervise.",
                              "{\"diagnosis\": 1}");
  REQUIRE(text);
  CHECK_THAT(*text, Catch::StartsWith("Blocking the loops over k"));
  auto requests = server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path == "/v1/chat/completions");
  CHECK_THAT(requests[0].body, Catch::Contains("\"planner-model\""));
  CHECK_THAT(requests[0].body, Catch::Contains("You supervise."));
  CHECK_THAT(requests[0].body, Catch::Contains("{\\\"diagnosis\\\": 1}"));
}

TEST_CASE("a refused prompt is an error saying what the server said, and a "
          "transient one is retried") {
  test::replay_server server;
  server.enqueue(test::load_recorded("openai_400.http"));
  auto refused = complete_prompt(planner_options(server), "s", "u");
  REQUIRE_FALSE(refused);
  CHECK(server.requests().size() == 1);
  CHECK_THAT(render(refused.error()), Catch::Contains("400"));
  server.enqueue(test::load_recorded("proxy_500.http"));
  server.enqueue(test::load_recorded("openai_chat.http"));
  auto retried = complete_prompt(planner_options(server), "s", "u");
  REQUIRE(retried);
  CHECK(server.requests().size() == 3);
}
