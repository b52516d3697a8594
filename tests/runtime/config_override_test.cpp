// Specification of command-line overrides of [run] keys
// (runtime/config_override.hpp) and of the new supervisor keys.

#include <catch2/catch.hpp>

#include "runtime/config.hpp"
#include "runtime/config_override.hpp"
#include "actors/protocol/error.hpp"

using namespace eat;

namespace {

const char* text = R"(# a comment
[run]
name = "x"    # the name
task = "sgemm"
seed = 7

[supervisor]
teams = 2
)";

} // namespace

TEST_CASE("an override replaces a key's line in [run] and keeps the rest") {
  auto out = with_run_keys(text, {{"seed", "9"}});
  REQUIRE(out);
  CHECK(*out == "# a comment\n[run]\nname = \"x\"    # the name\n"
                "task = \"sgemm\"\nseed = 9\n\n[supervisor]\nteams = 2\n");
}

TEST_CASE("an override of an absent key is added right after [run]") {
  auto out = with_run_keys(text, {{"mode", "\"flat\""}});
  REQUIRE(out);
  auto cfg = parse_config(*out, "x.toml", config_checks::text_only);
  REQUIRE(cfg);
  CHECK(cfg->run.mode == "flat");
  CHECK(cfg->run.seed == 7);
  CHECK(cfg->supervisor.teams == 2);
}

TEST_CASE("a configuration without a run table gets one and a broken one is "
          "refused") {
  auto out = with_run_keys("[supervisor]\nteams = 1\n", {{"seed", "3"}});
  REQUIRE(out);
  CHECK(*out == "[supervisor]\nteams = 1\n[run]\nseed = 3\n");
  CHECK_FALSE(with_run_keys("[run\n", {{"seed", "3"}}));
}

TEST_CASE("a run table written as dotted keys or an inline table is rewritten "
          "whole with the overrides") {
  // Line-wise, `run.seed = 3` became a top-level `seed = 5`, and `mode`
  // was inserted outside any table: "unknown key 'seed' outside any
  // section" for a file without one.
  for (std::string given :
    {"# top\nrun.task = \"sgemm\"\nrun.seed = 3\n[supervisor]\nteams = 2\n",
      "run = { task = \"sgemm\", seed = 3 }\n[supervisor]\nteams = 2\n",
      "[supervisor]\nteams = 2\n[run]\n\"seed\" = 3\ntask = \"sgemm\"\n"}) {
    auto out = with_run_keys(given, {{"seed", "5"}, {"mode", "\"flat\""}});
    INFO(given);
    REQUIRE(out);
    INFO(*out);
    auto cfg = parse_config(*out, "x.toml", config_checks::text_only);
    REQUIRE(cfg);
    CHECK(cfg->run.seed == 5);
    CHECK(cfg->run.mode == "flat");
    CHECK(cfg->run.task == "sgemm");
    CHECK(cfg->supervisor.teams == 2);
  }
}

TEST_CASE("mode, token budget, policy and team limits are checked") {
  auto cfg = parse_config(
    "[run]\ntask = \"sgemm\"\nmode = \"team\"\ntoken_budget = -1\n"
    "[supervisor]\nteams = 3\nmax_teams = 2\npolicy = \"oracle\"\n",
    "x.toml", config_checks::text_only);
  REQUIRE_FALSE(cfg);
  auto what = render(cfg.error());
  CHECK_THAT(what, Catch::Contains(
                     "run.mode: expected one of \"eat\", \"flat\", \"single\""));
  CHECK_THAT(what, Catch::Contains("run.token_budget"));
  CHECK_THAT(what, Catch::Contains("supervisor.max_teams (2) must be >= "
                                   "supervisor.teams (3)"));
  CHECK_THAT(what, Catch::Contains("supervisor.policy: expected one of"));
}

TEST_CASE("the llm policy needs a model") {
  auto cfg = parse_config(
    "[run]\ntask = \"sgemm\"\n[supervisor]\npolicy = \"llm\"\n", "x.toml",
    config_checks::text_only);
  REQUIRE_FALSE(cfg);
  CHECK_THAT(render(cfg.error()),
             Catch::Contains("needs [supervisor.llm] model"));
  cfg = parse_config("[run]\ntask = \"sgemm\"\n[supervisor]\npolicy = "
                     "\"llm\"\n[supervisor.llm]\napi = \"anthropic\"\nmodel = "
                     "\"claude-x\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n",
                     "x.toml", config_checks::text_only);
  REQUIRE(cfg);
  CHECK(cfg->planner.api == "anthropic");
  CHECK(cfg->planner.model == "claude-x");
}
