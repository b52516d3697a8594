// Specification of the restructuring policies (actors/policy.hpp): what the
// heuristic decides for a team on a plateau, and how an llm's JSON plan is
// read and checked.

#include <catch2/catch.hpp>

#include "actors/policy.hpp"
#include "actors/protocol/error.hpp"

using namespace eat;

namespace {

run_snapshot two_teams() {
  run_snapshot run;
  run.teams = {{"t1", "local", {"t1.a1"}, 10, "t1-c0004", 3.0, 0, 1},
               {"t2", "local", {"t2.a1"}, 10, "t2-c0007", 2.0, 0, 1}};
  run.best_candidate = "t1-c0004";
  run.best_team = "t1";
  run.best_speedup = 3.0;
  run.evaluations = 20;
  run.evaluations_left = 20;
  run.max_teams = 4;
  run.families = {"tiled", "packed"};
  run.passed_candidates = {"t1-c0004", "t2-c0007"};
  return run;
}

plateau_diagnosis diagnosis(const std::string& team) {
  plateau_diagnosis d;
  d.team = team;
  d.strategy = "local";
  d.evaluations_since_improvement = 8;
  d.failure_mix = {{"passed", 8}};
  d.similarity_distance = 0.1;
  d.families_tried = {{"tiled", 3.0}};
  return d;
}

std::vector<std::string> ops(const restructure_plan& p) {
  std::vector<std::string> out;
  for (const auto& x : p.operations)
    out.push_back(x.op);
  return out;
}

} // namespace

TEST_CASE("a converged leading team keeps climbing by recombination while a "
          "new team searches the family it has not tried") {
  auto plan = heuristic_plan(two_teams(), diagnosis("t1"), 1);
  CHECK(plan.policy == "heuristic");
  REQUIRE(ops(plan) == std::vector<std::string>{"spawn", "set_strategy"});
  CHECK(plan.operations[0].strategy == "local:packed");
  CHECK(plan.operations[0].parent == "baseline");
  CHECK(plan.operations[1].teams == std::vector<std::string>{"t1"});
  CHECK(plan.operations[1].strategy == "crossover");
  CHECK_THAT(plan.operations[0].reason, Catch::Contains("converged"));
  CHECK(check_plan(plan, two_teams()).empty());
}

TEST_CASE("a converged team of two agents is split into a climbing and an "
          "exploring half") {
  auto run = two_teams();
  run.teams[0].agents = {"t1.a1", "t1.a2"};
  auto plan = heuristic_plan(run, diagnosis("t1"), 1);
  REQUIRE(ops(plan) == std::vector<std::string>{"split"});
  CHECK(plan.operations[0].strategies
        == std::vector<std::string>{"local", "explore"});
  CHECK(check_plan(plan, run).empty());
}

TEST_CASE("a trailing team continues from the leader's best, and is merged "
          "into the leader when that did not help") {
  auto run = two_teams();
  auto plan = heuristic_plan(run, diagnosis("t2"), 1);
  REQUIRE(ops(plan) == std::vector<std::string>{"set_parent", "set_strategy"});
  CHECK(plan.operations[0].parent == "team:t1");
  run.teams[1].restructures = 1;
  plan = heuristic_plan(run, diagnosis("t2"), 1);
  REQUIRE(ops(plan) == std::vector<std::string>{"merge"});
  CHECK(plan.operations[0].teams == std::vector<std::string>{"t2", "t1"});
  CHECK(plan.operations[0].parent == "best");
  CHECK(check_plan(plan, run).empty());
}

TEST_CASE("a team whose candidates mostly fail restarts from the run's best") {
  auto d = diagnosis("t1");
  d.failure_mix = {{"passed", 2}, {"incorrect", 3}, {"compile_error", 3}};
  auto plan = heuristic_plan(two_teams(), d, 1);
  REQUIRE(ops(plan) == std::vector<std::string>{"set_parent", "set_strategy"});
  CHECK(plan.operations[0].parent == "best");
  CHECK_THAT(plan.operations[0].reason, Catch::StartsWith("6 of its last 8"));
}

TEST_CASE("a team restructured three times without improving is replaced") {
  auto run = two_teams();
  run.teams[1].restructures = 3;
  auto plan = heuristic_plan(run, diagnosis("t2"), 1);
  REQUIRE(ops(plan) == std::vector<std::string>{"dissolve", "spawn"});
  CHECK(plan.operations[0].teams == std::vector<std::string>{"t2"});
  CHECK(plan.operations[1].agents == 1);
}

TEST_CASE("a run on a plateau gets a fresh team, or restarts its weakest "
          "team when it is full") {
  auto run = two_teams();
  auto d = diagnosis("run");
  auto plan = heuristic_plan(run, d, 1);
  REQUIRE(ops(plan) == std::vector<std::string>{"spawn"});
  CHECK(plan.operations[0].parent == "baseline");
  run.max_teams = 2;
  plan = heuristic_plan(run, d, 1);
  REQUIRE(ops(plan) == std::vector<std::string>{"set_strategy"});
  CHECK(plan.operations[0].teams == std::vector<std::string>{"t2"});
  CHECK(plan.operations[0].strategy == "random");
}

TEST_CASE("an llm plan is read from the JSON object in its answer") {
  auto plan = parse_plan(
    "Here is my plan:\n```json\n{\"rationale\": \"diversify\", \"operations\": "
    "[{\"op\": \"spawn\", \"strategy\": \"explore:packed\", \"parent\": "
    "\"best\", \"agents\": 2, \"reason\": \"try packed\"}, {\"op\": "
    "\"set_weight\", \"teams\": [\"t1\"], \"weight\": 2, \"reason\": "
    "\"leader\"}]}\n```",
    two_teams());
  REQUIRE(plan);
  CHECK(plan->policy == "llm");
  CHECK(plan->rationale == "diversify");
  REQUIRE(ops(*plan) == std::vector<std::string>{"spawn", "set_weight"});
  CHECK(plan->operations[0].agents == 2);
  CHECK(plan->operations[1].weight == 2);
}

TEST_CASE("an invalid or impossible llm plan is refused with every problem") {
  auto run = two_teams();
  auto fails = [&](const std::string& answer) {
    auto plan = parse_plan(answer, run);
    REQUIRE_FALSE(plan);
    return render(plan.error());
  };
  CHECK_THAT(fails("I would split team t1."), Catch::Contains("no JSON object"));
  CHECK_THAT(fails("{\"operations\": [}"), Catch::Contains("does not parse"));
  CHECK_THAT(fails("{\"operations\": []}"), Catch::Contains("no operations"));
  auto text = fails(
    "{\"operations\": [{\"op\": \"teleport\", \"reason\": \"x\"}, {\"op\": "
    "\"dissolve\", \"teams\": [\"t9\"], \"reason\": \"x\"}, {\"op\": "
    "\"set_strategy\", \"teams\": [\"t1\"], \"strategy\": \"greedy\", "
    "\"reason\": \"x\"}, {\"op\": \"set_parent\", \"teams\": [\"t2\"], "
    "\"parent\": \"t5-c0001\", \"reason\": \"x\"}, {\"op\": \"split\", "
    "\"teams\": [\"t1\"], \"strategies\": [\"local\", \"explore\"]}]}");
  CHECK_THAT(text, Catch::Contains("operations[0]: unknown op \"teleport\""));
  CHECK_THAT(text, Catch::Contains("operations[1]: team t9 is not an active"));
  CHECK_THAT(text, Catch::Contains("unknown strategy \"greedy\""));
  CHECK_THAT(text, Catch::Contains("parent \"t5-c0001\""));
  CHECK_THAT(text, Catch::Contains("t1 has one agent and cannot split"));
  CHECK_THAT(text, Catch::Contains("operations[4]: missing reason"));
}

TEST_CASE("a plan may not leave the run without teams or with too many") {
  auto run = two_teams();
  restructure_plan plan;
  plan.operations = {{"dissolve", {"t1"}, "", {}, "", 0, "", 0, "r"},
                     {"dissolve", {"t2"}, "", {}, "", 0, "", 0, "r"}};
  auto problems = check_plan(plan, run);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "the plan leaves no team");
  run.max_teams = 2;
  plan.operations = {{"spawn", {}, "local", {}, "best", 1, "", 0, "r"}};
  problems = check_plan(plan, run);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "the plan leaves more than 2 teams");
}

TEST_CASE("the llm's prompt holds the diagnosis, the teams, the learning "
          "document and the answer's schema") {
  auto prompt = plan_prompt(two_teams(), diagnosis("t1"), "- ikj is best\n");
  CHECK_THAT(prompt, Catch::Contains("\"evaluations_since_improvement\":8"));
  CHECK_THAT(prompt, Catch::Contains("\"t2-c0007\""));
  CHECK_THAT(prompt, Catch::Contains("- ikj is best"));
  CHECK_THAT(prompt, Catch::Contains("{\"op\":\"split\""));
  CHECK_THAT(prompt, Catch::Contains("families: tiled, packed"));
}
