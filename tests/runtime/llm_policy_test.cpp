// Specification of the `llm` supervisor policy end to end: the real `eat run`
// asks a model server (a local replay server) for a plan when a team reaches
// a plateau, applies a valid plan with the model's reasons, and lets the
// heuristic decide when the model's answer is unusable (docs/supervisor.md).

#include <catch2/catch.hpp>

#include <fstream>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "tests/actors/agent/replay_server.hpp"
#include "tests/runtime/chat_reply.hpp"
#include "tests/runtime/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

/// A run of one team that reaches a plateau within a few evaluations: every
/// window of 2 evaluations without a 95 % gain is one.
void write_config(const std::filesystem::path& file,
  const std::filesystem::path& root, const std::string& base_url) {
  std::ofstream{file}
    << "[run]\nname = \"llm-policy\"\ntask = \"sgemm\"\n"
    << "tasks_dir = \"" << EAT_SOURCE_DIR << "/kernels\"\n"
    << "root = \"" << root.string() << "\"\nseed = 3\n"
    << "max_evaluations = 8\n"
    << "[supervisor]\nteams = 1\nmax_teams = 2\npolicy = \"llm\"\n"
    << "plateau_window = 2\nplateau_threshold = 0.95\n"
    << "[supervisor.llm]\napi = \"openai\"\nbase_url = \"" << base_url
    << "\"\nmodel = \"planner-test\"\ntimeout_s = 60\n"
    << "[timing]\nwarmup = 1\nmin_samples = 3\nmin_time_s = 0.01\n"
    << "max_time_s = 0.2\ncheck_seeds = 2\n";
}

/// What one `eat run` with the llm policy printed and sent.
struct llm_run {
  int status = 0;
  std::string output;
  std::vector<eat::test::recorded_request> requests;
};

/// Runs the configuration above; the model answers `first`, then prose.
llm_run run_with_first_answer(const std::string& first) {
  eat::test::temp_dir tmp;
  eat::test::replay_server server;
  server.enqueue(eat::test::chat_reply(first, "planner-test"));
  for (int i = 0; i < 8; ++i)
    server.enqueue(eat::test::chat_reply(
      "I would restructure the teams, probably.", "planner-test"));
  auto config = tmp.path() / "config.toml";
  write_config(config, tmp.path(), server.base_url());
  eat::test::child_process run{EAT_BINARY, {"run", config.string()}};
  llm_run out;
  out.status = run.finish(out.output);
  out.requests = server.requests();
  return out;
}

} // namespace

TEST_CASE("at a plateau the llm policy sends the diagnosis and the learning "
          "document to the model and carries out its valid plan") {
  auto x = run_with_first_answer(
    R"({"rationale": "the only team repeats itself",)"
    R"( "operations": [{"op": "spawn", "strategy": "explore",)"
    R"( "parent": "best", "agents": 1,)"
    R"( "reason": "model: explore away from the best"}]})");
  INFO(x.output);
  REQUIRE(WIFEXITED(x.status));
  CHECK(WEXITSTATUS(x.status) == 0);
  REQUIRE(!x.requests.empty());
  CHECK(x.requests[0].path == "/v1/chat/completions");
  auto prompt = nlohmann::json::parse(x.requests[0].body).dump();
  CHECK_THAT(prompt, Catch::Contains("## Diagnosis"));
  CHECK_THAT(prompt, Catch::Contains("## Learning document"));
  CHECK_THAT(x.output, Catch::Contains("model: explore away from the best"));
}

TEST_CASE("an answer of the model that is not a plan is recorded and the "
          "heuristic restructures instead while the run goes on") {
  auto x = run_with_first_answer("Let me think about the teams first.");
  INFO(x.output);
  REQUIRE(WIFEXITED(x.status));
  CHECK(WEXITSTATUS(x.status) == 0);
  REQUIRE(!x.requests.empty());
  CHECK_THAT(x.output, Catch::Contains("llm plan not used"));
  CHECK_THAT(x.output, Catch::Contains("evaluations"));
}
