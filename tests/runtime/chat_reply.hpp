// An OpenAI chat completion for the local replay server
// (tests/actors/agent/replay_server.hpp), for the end-to-end runs that talk
// to a model.

#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tests/actors/agent/replay_server.hpp"

namespace eat::test {

/// A completion by `model` whose message text is `content`.
inline recorded_response chat_reply(
  const std::string& content, const std::string& model) {
  nlohmann::json body = {
    {"id", "chatcmpl-" + model},
    {"object", "chat.completion"},
    {"model", model},
    {"choices", {{{"index", 0},
                  {"message", {{"role", "assistant"}, {"content", content}}},
                  {"finish_reason", "stop"}}}},
    {"usage", {{"prompt_tokens", 900}, {"completion_tokens", 60},
                {"total_tokens", 960}}},
  };
  recorded_response x;
  x.headers = {{"Content-Type", "application/json"}};
  x.body = body.dump();
  return x;
}

} // namespace eat::test
