// Specification of the cli presets (cli_presets.hpp): argument templates,
// token usage normalised per CLI, the final message, fenced-block fallback
// and which failures are worth retrying.

#include <catch2/catch.hpp>

#include "actors/agent/cli_presets.hpp"
#include "actors/protocol/error.hpp"

using namespace eat;

TEST_CASE("cli presets: known presets load, unknown ones are refused") {
  for (auto name : {"claude", "codex", "gemini", "aider", "custom"})
    CHECK(find_preset(name));
  auto codex = find_preset("codex");
  CHECK(codex->args
        == std::vector<std::string>{"exec", "--json", "--sandbox",
                                    "workspace-write", "--skip-git-repo-check",
                                    "-"});
  CHECK(codex->prompt_on_stdin);
  auto bad = find_preset("cursor");
  REQUIRE_FALSE(bad);
  CHECK_THAT(render(bad.error()), Catch::Contains("unknown preset 'cursor'"));
  CHECK_FALSE(parse_output_format("xml"));
}

TEST_CASE("cli presets: placeholders in arguments are replaced, other braces kept") {
  auto out = expand_args({"--max-turns", "{max_turns}", "{x}", "a{prompt}b",
                          "{unterminated"},
                         {{"max_turns", "7"}, {"prompt", "P"}});
  CHECK(out
        == std::vector<std::string>{"--max-turns", "7", "{x}", "aPb",
                                    "{unterminated"});
}

TEST_CASE("cli presets: Claude's result object gives the usage and cost") {
  usage_parser p{cli_output_format::claude_stream_json};
  p.feed_line(R"({"type":"assistant","message":{"id":"a","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":5}}})");
  // A second content block of the same message repeats its usage.
  p.feed_line(R"({"type":"assistant","message":{"id":"a","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":5}}})");
  p.feed_line(R"({"type":"assistant","message":{"id":"b","content":[],"usage":{"input_tokens":1,"cache_creation_input_tokens":7,"output_tokens":2}}})");
  CHECK(total_tokens(p.usage()) == 115 + 10);
  p.feed_line("not json at all");
  p.feed_line(R"({"type":"result","is_error":false,"result":"final","total_cost_usd":0.5,"usage":{"input_tokens":20,"cache_read_input_tokens":300,"cache_creation_input_tokens":40,"output_tokens":9}})");
  CHECK(p.usage().input == 20);
  CHECK(p.usage().cache_read == 300);
  CHECK(p.usage().cache_write == 40);
  CHECK(p.usage().output == 9);
  CHECK(p.usage().cost_usd == Approx(0.5));
  CHECK(p.final_message() == "final");
  CHECK(p.error_text().empty());
}

TEST_CASE("cli presets: Codex turns are summed, cached input and reasoning split off") {
  usage_parser p{cli_output_format::codex_jsonl};
  p.feed_line(R"({"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":600,"output_tokens":300,"reasoning_output_tokens":100}})");
  p.feed_line(R"({"type":"item.completed","item":{"type":"agent_message","text":"done"}})");
  p.feed_line(R"({"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":1500,"output_tokens":400}})");
  p.feed_line(R"({"type":"turn.failed","error":{"message":"stream error: 503"}})");
  CHECK(p.usage().input == 900);
  CHECK(p.usage().cache_read == 2100);
  CHECK(p.usage().output == 600);
  CHECK(p.usage().reasoning == 100);
  CHECK(p.final_message() == "done");
  CHECK(p.error_text() == "stream error: 503");
}

TEST_CASE("cli presets: absurd Codex counts saturate instead of wrapping") {
  usage_parser p{cli_output_format::codex_jsonl};
  p.feed_line(
    R"({"type":"turn.completed","usage":{"input_tokens":1e300,"output_tokens":9223372036854775807}})");
  p.feed_line(
    R"({"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":9223372036854775807}})");
  CHECK(p.usage().input == UINT64_MAX);
  CHECK(p.usage().output == 18446744073709551614ULL);
  CHECK(total_tokens(p.usage()) == UINT64_MAX);
}

TEST_CASE("cli presets: Gemini's stats are summed over models") {
  usage_parser p{cli_output_format::gemini_json};
  p.finish(R"(Loaded cached credentials.
{
  "response": "Here it is",
  "stats": {
    "models": {
      "gemini-2.5-pro": {"tokens": {"prompt": 24939, "candidates": 20,
                         "total": 25113, "cached": 21263, "thoughts": 154,
                         "tool": 0}},
      "gemini-2.5-flash": {"tokens": {"prompt": 100, "candidates": 10,
                           "cached": 0, "thoughts": 0}}
    }
  }
})");
  CHECK(p.usage().input == 24939 - 21263 + 100);
  CHECK(p.usage().cache_read == 21263);
  CHECK(p.usage().output == 30);
  CHECK(p.usage().reasoning == 154);
  CHECK(p.final_message() == "Here it is");
}

TEST_CASE("cli presets: aider's token lines are summed, the session cost kept") {
  usage_parser p{cli_output_format::aider_text};
  p.feed_line("Tokens: 4.2k sent, 1k cache write, 2k cache hit, 512 received. "
              "Cost: $0.01 message, $0.01 session.");
  p.feed_line("Tokens: 1.5k sent, 100 received. Cost: $0.02 message, $0.03 "
              "session.");
  p.feed_line("Applied edit to kernel.cpp");
  CHECK(p.usage().input == 5700);
  CHECK(p.usage().cache_write == 1000);
  CHECK(p.usage().cache_read == 2000);
  CHECK(p.usage().output == 612);
  CHECK(p.usage().cost_usd == Approx(0.03));
}

TEST_CASE("cli presets: the last C++ fenced block is the fallback kernel") {
  CHECK(last_cpp_block("a\n```cpp\nint a;\n```\nb\n```python\nx\n```\n")
        == std::optional<std::string>{"int a;\n"});
  CHECK(last_cpp_block("```\nint u;\n```\n```c++\nint v;\n```")
        == std::optional<std::string>{"int v;\n"});
  CHECK_FALSE(last_cpp_block("no code here"));
  CHECK_FALSE(last_cpp_block("```cpp\nunterminated\n"));
}

TEST_CASE("cli presets: rate limits, 5xx and overload are retryable, others not") {
  CHECK(is_retryable("API Error: 429 Too Many Requests"));
  CHECK(is_retryable("rate_limit_error"));
  CHECK(is_retryable("HTTP 503 Service Unavailable"));
  CHECK(is_retryable("529 {\"type\":\"overloaded_error\"}"));
  CHECK(is_retryable("Overloaded"));
  CHECK_FALSE(is_retryable("Invalid API key"));
  CHECK_FALSE(is_retryable("used 1500 tokens"));
  CHECK_FALSE(is_retryable("HTTP 401 Unauthorized"));
  CHECK(is_retryable("HTTP/1.1 502 Bad Gateway"));
  CHECK(is_retryable("status: 500"));
  CHECK(is_retryable("upstream said 504 Gateway Timeout"));
  // A number that is no status (it was retried twice).
  CHECK_FALSE(is_retryable("compiled kernel: 512 registers, speedup 1.503x"));
  CHECK_FALSE(is_retryable("tile 500 x 429"));
}
