// Specification of the supervisor's restructuring under CAF's deterministic
// scheduler (tests/actors/supervisor_fixture.hpp): when a plateau is
// detected, what each operation of a plan does to the teams and the history,
// the llm policy's fallback, and restarts of crashed agents.

#include "tests/actors/supervisor_fixture.hpp"

#include <memory>

using namespace eat;
using namespace eat::test;

namespace {

using answers = std::shared_ptr<std::vector<std::string>>;

/// A planner that answers the scripted texts in order, then "no plan".
planner_actor::behavior_type scripted_planner(planner_actor::pointer,
                                              answers script, answers prompts) {
  return {
    [=](plan_atom, const std::string& prompt) -> std::string {
      prompts->push_back(prompt);
      if (script->empty())
        return "no plan";
      auto a = script->front();
      script->erase(script->begin());
      return a;
    },
  };
}

/// An agent that dies on its first assignment, without answering it.
agent_actor::behavior_type crashing_agent(agent_actor::pointer self) {
  return {
    [=](propose_atom, const assignment&) -> caf::delegated<agent_reply> {
      self->quit(make_error(error::agent_failed, "agent process crashed"));
      return {};
    },
  };
}

template <class T>
std::vector<T> bodies(const std::vector<event>& log, event_kind kind) {
  std::vector<T> out;
  for (const auto& e : log)
    if (e.kind == kind)
      out.push_back(*wire::decode<T>(e.body));
  return out;
}

/// Evaluations finished before the first event of `kind`.
size_t evaluations_before(const std::vector<event>& log, event_kind kind) {
  size_t n = 0;
  for (const auto& e : log) {
    if (e.kind == kind)
      return n;
    n += e.kind == event_kind::evaluation_finished ? 1 : 0;
  }
  return n;
}

struct llm_fixture : fixture {
  answers script = std::make_shared<std::vector<std::string>>();
  answers prompts = std::make_shared<std::vector<std::string>>();

  supervisor_options llm_options(uint64_t evaluations, uint32_t teams,
                                 uint32_t agents) {
    auto o = options(evaluations);
    // 30 configurations (c is ignored by the fake device), so that teams
    // that never repeat each other's configurations have room for 20
    // evaluations.
    o.task.families[0].source += " {{c}}";
    o.task.families[0].params.push_back({"c", {"p", "q"}});
    o.plateau.window = 3;
    o.teams = teams;
    o.agents_per_team = agents;
    o.policy = "llm";
    planner = sys->spawn(scripted_planner, script, prompts);
    return o;
  }
};

} // namespace

TEST_CASE_METHOD(fixture, "a plateau is detected exactly when the window "
                          "of evaluations without improvement is full") {
  auto opts = options(12);
  opts.plateau.window = 3;
  auto out = run(opts, started_log(), fake_mode::flat);
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 12);
  // Evaluation 1 sets the best; 2, 3 and 4 make the first plateau.
  CHECK(evaluations_before(out.log, event_kind::team_restructured) == 4);
  auto changes = bodies<team_restructured>(out.log,
                                           event_kind::team_restructured);
  REQUIRE_FALSE(changes.empty());
  CHECK(changes[0].team == "t1");
  CHECK_THAT(changes[0].diagnosis,
             Catch::Contains("\"evaluations_since_improvement\":3"));
  CHECK_THAT(changes[0].diagnosis, Catch::Contains("\"passed\":3"));
  CHECK_THAT(changes[0].diagnosis, Catch::Contains("\"policy\":\"heuristic\""));
  CHECK_FALSE(changes[0].reason.empty());
}

TEST_CASE_METHOD(fixture, "without restructuring (flat and single modes) a "
                          "plateau changes nothing") {
  auto opts = options(12);
  opts.plateau.window = 3;
  opts.restructure = false;
  auto out = run(opts, started_log(), fake_mode::flat);
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 12);
  CHECK(count_kind(out.log, event_kind::team_restructured) == 0);
  CHECK(count_kind(out.log, event_kind::team_spawned) == 1);
}

TEST_CASE_METHOD(llm_fixture, "a split ends the team and spawns two teams "
                              "that share its agents and go on from its best") {
  script->push_back(
    "{\"rationale\":\"converged\",\"operations\":[{\"op\":\"split\","
    "\"teams\":[\"t1\"],\"strategies\":[\"local\",\"explore\"],"
    "\"reason\":\"one half climbs, one explores\"}]}");
  auto out = run(llm_options(14, 1, 2), started_log(), fake_mode::flat);
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 14);
  auto splits = bodies<team_split>(out.log, event_kind::team_split);
  REQUIRE(splits.size() == 1);
  CHECK(splits[0].team == "t1");
  CHECK(splits[0].into == std::vector<std::string>{"t2", "t3"});
  CHECK(splits[0].reason == "one half climbs, one explores");
  CHECK_THAT(splits[0].diagnosis, Catch::Contains("\"policy\":\"llm\""));
  auto h = rebuild(out.log);
  REQUIRE(h);
  CHECK_FALSE(h->teams.at("t1").active);
  CHECK(h->teams.at("t2").spawned.agents == std::vector<std::string>{"t1.a1"});
  CHECK(h->teams.at("t3").spawned.agents == std::vector<std::string>{"t1.a2"});
  CHECK(h->teams.at("t2").spawned.strategy != "");
  CHECK(h->teams.at("t2").spawned.parent == h->teams.at("t3").spawned.parent);
  CHECK_FALSE(h->teams.at("t2").spawned.parent.empty());
  CHECK_FALSE(h->teams.at("t2").scored.empty());
  CHECK_FALSE(h->teams.at("t3").scored.empty());
  CHECK(count_kind(out.log, event_kind::budget_changed) >= 3);
  REQUIRE_FALSE(prompts->empty());
  CHECK_THAT(prompts->front(), Catch::Contains("\"team\":\"t1\""));
}

TEST_CASE_METHOD(llm_fixture, "a merge ends both teams and one team goes on "
                              "with all their agents") {
  script->push_back(
    "{\"operations\":[{\"op\":\"merge\",\"teams\":[\"t1\",\"t2\"],"
    "\"strategy\":\"crossover\",\"parent\":\"best\",\"reason\":\"pool\"}]}");
  auto out = run(llm_options(16, 2, 1), started_log(), fake_mode::flat);
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 16);
  auto merges = bodies<team_merged>(out.log, event_kind::team_merged);
  REQUIRE(merges.size() == 1);
  CHECK(merges[0].teams == std::vector<std::string>{"t1", "t2"});
  CHECK(merges[0].into == "t3");
  auto h = rebuild(out.log);
  REQUIRE(h);
  CHECK_FALSE(h->teams.at("t1").active);
  CHECK_FALSE(h->teams.at("t2").active);
  CHECK(h->teams.at("t3").spawned.agents
        == std::vector<std::string>{"t1.a1", "t2.a1"});
  auto spawned = bodies<team_spawned>(out.log, event_kind::team_spawned);
  REQUIRE(spawned.size() >= 3);
  CHECK(spawned[2].team == "t3");
  CHECK(spawned[2].strategy == "crossover");
  CHECK(spawned[2].parent == out.summary->best_candidate);
}

TEST_CASE_METHOD(llm_fixture, "dissolving a team hands its budget to the "
                              "others and moving an agent changes both "
                              "teams") {
  script->push_back(
    "{\"operations\":[{\"op\":\"move_agent\",\"teams\":[\"t1\",\"t2\"],"
    "\"agent\":\"t1.a2\",\"reason\":\"t2 needs help\"}]}");
  script->push_back(
    "{\"operations\":[{\"op\":\"dissolve\",\"teams\":[\"t1\"],"
    "\"reason\":\"stuck\"}]}");
  auto out = run(llm_options(20, 2, 2), started_log(), fake_mode::flat);
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 20);
  auto h = rebuild(out.log);
  REQUIRE(h);
  CHECK(h->teams.at("t2").spawned.agents
        == std::vector<std::string>{"t2.a1", "t2.a2", "t1.a2"});
  CHECK(h->teams.at("t1").ended_by == "team_dissolved");
  // After the dissolution, the other teams do the rest of the work.
  auto dissolved_at = evaluations_before(out.log, event_kind::team_dissolved);
  CHECK(h->teams.at("t1").scored.size() <= dissolved_at);
}

TEST_CASE_METHOD(llm_fixture, "an invalid llm plan is recorded and the "
                              "heuristic decides instead") {
  script->push_back("{\"operations\":[{\"op\":\"teleport\",\"reason\":\"x\"}]}");
  auto out = run(llm_options(8, 1, 1), started_log(), fake_mode::flat);
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 8);
  // The heuristic's plan for a lone converged team changes its strategy.
  auto all = bodies<team_restructured>(out.log, event_kind::team_restructured);
  REQUIRE_FALSE(all.empty());
  CHECK_THAT(all[0].diagnosis, Catch::Contains("\"policy\":\"heuristic\""));
  CHECK_THAT(all[0].diagnosis,
             Catch::Contains("llm plan rejected: invalid_plan"));
  CHECK_THAT(all[0].diagnosis, Catch::Contains("unknown op"));
}

TEST_CASE_METHOD(fixture, "a crashed agent is replaced and its team "
                          "restarted without losing an evaluation") {
  auto crashes = std::make_shared<int>(1);
  make_agent = [crashes](caf::actor_system& sys, const std::string&,
                         const std::string&) -> agent_actor {
    if (*crashes > 0) {
      --*crashes;
      return sys.spawn(crashing_agent);
    }
    return sys.spawn(builtin_agent, builtin_agent_options{{"local", 3}, 1000});
  };
  auto out = run(options(6), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 6);
  auto notes = bodies<team_restructured>(out.log,
                                         event_kind::team_restructured);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0].reason, Catch::StartsWith("restarted (1 of 3) after a "
                                                "crash"));
  auto ids = evaluated_ids(out.log);
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 6);
}

TEST_CASE_METHOD(fixture, "a team whose agents keep crashing is retired") {
  make_agent = [](caf::actor_system& sys, const std::string&,
                  const std::string&) -> agent_actor {
    return sys.spawn(crashing_agent);
  };
  auto out = run(options(6), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 0);
  CHECK_THAT(out.summary->reason, Catch::Contains("retired after 3 restarts"));
  auto h = rebuild(out.log);
  REQUIRE(h);
  CHECK(h->teams.at("t1").ended_by == "team_dissolved");
}
