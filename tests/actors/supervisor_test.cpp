// Specification of a run's actors (supervisor, teams, builtin agents) under
// CAF's deterministic test scheduler (tests/actors/supervisor_fixture.hpp).

#include <set>

#include "actors/team.hpp"
#include "persistence/run_history.hpp"
#include "tests/actors/supervisor_fixture.hpp"

using namespace eat;
using namespace eat::test;

TEST_CASE_METHOD(fixture, "a run evaluates exactly max_evaluations candidates, "
                          "logging each before, during and after evaluation") {
  auto out = run(options(6), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 6);
  CHECK(out.summary->reason == "max_evaluations reached (6)");
  CHECK(count_kind(out.log, event_kind::team_spawned) == 1);
  CHECK(count_kind(out.log, event_kind::agent_assigned) == 1);
  CHECK(count_kind(out.log, event_kind::candidate_submitted) == 6);
  CHECK(count_kind(out.log, event_kind::evaluation_started) == 6);
  CHECK(count_kind(out.log, event_kind::evaluation_finished) == 6);
  CHECK(out.log.back().kind == event_kind::run_finished);
  // Each candidate: submitted, then started, then finished, nothing between.
  for (size_t i = 0; i < out.log.size(); ++i)
    if (out.log[i].kind == event_kind::candidate_submitted) {
      REQUIRE(i + 2 < out.log.size());
      CHECK(out.log[i + 1].kind == event_kind::evaluation_started);
      CHECK(out.log[i + 2].kind == event_kind::evaluation_finished);
    }
  auto h = rebuild(out.log);
  REQUIRE(h);
  CHECK(h->finished);
  CHECK(h->best_speedup == out.summary->best_speedup);
  CHECK(h->best_candidate == out.summary->best_candidate);
  auto ids = evaluated_ids(out.log);
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 6);
}

TEST_CASE_METHOD(fixture, "every evaluation leaves its files, the team its "
                          "notes and best kernel, and the store stays "
                          "consistent") {
  auto out = run(options(5), started_log());
  REQUIRE(out.summary);
  persistence::file_tree files{*out.store};
  for (const auto& e : out.log) {
    if (e.kind != event_kind::evaluation_finished)
      continue;
    auto r = wire::decode<eval_result>(e.body);
    REQUIRE(r);
    auto dir = "/teams/t1/candidates/" + r->candidate + "/";
    CHECK(files.get(dir + "kernel.cpp"));
    auto report = files.get(dir + "result.md");
    REQUIRE(report);
    CHECK_THAT(*report, Catch::StartsWith("# " + r->candidate + ": "
                                          + to_string(r->status)));
  }
  auto notes = files.get("/teams/t1/notes.md");
  REQUIRE(notes);
  CHECK_THAT(*notes, Catch::Contains("strategy: local"));
  auto best = files.get("/teams/t1/best_kernel.cpp");
  REQUIRE(best);
  CHECK(*best == out.summary->best_source);
  auto check = persistence::fsck(*out.store);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->views > 0);
}

TEST_CASE_METHOD(fixture, "a run ends with lessons drawn from its evidence") {
  auto out = run(options(40), started_log()); // the whole 5 x 3 space
  REQUIRE(out.summary);
  auto h = rebuild(out.log);
  REQUIRE(h);
  // a=4 is best (median 4.17x against 3.17x for a=3); b's values are too
  // close to call; a=5 always fails its check.
  REQUIRE(h->learnings.size() == 2);
  CHECK_THAT(h->learnings[0].text, Catch::StartsWith("**tiled / a**: `4`"));
  CHECK(h->learnings[0].evidence.size() == 4);
  CHECK_THAT(h->learnings[1].text,
             Catch::StartsWith("**failures**: 3 of 15 candidates failed"));
  auto doc = persistence::file_tree{*out.store}.get("/learning.md");
  REQUIRE(doc);
  CHECK_THAT(*doc, Catch::Contains("L0001"));
  CHECK_THAT(*doc, Catch::Contains("L0002"));
}

TEST_CASE_METHOD(fixture, "a resumed run evaluates the unfinished candidate "
                          "first and then proposes what an uninterrupted run "
                          "would have") {
  auto whole = run(options(6), started_log());
  REQUIRE(whole.summary);
  // Cut the log right after the third candidate was submitted, as a kill -9
  // during its evaluation would.
  std::vector<event> cut;
  int submitted = 0;
  for (const auto& e : whole.log) {
    cut.push_back(e);
    if (e.kind == event_kind::candidate_submitted && ++submitted == 3)
      break;
  }
  auto resumed = run(options(6), cut);
  REQUIRE(resumed.summary);
  CHECK(resumed.summary->evaluations == 6);
  auto ids = evaluated_ids(resumed.log);
  REQUIRE(ids.size() == 6);
  CHECK(ids[2] == "t1-c0003"); // the unfinished one, evaluated first
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 6);
  CHECK(submitted_params(resumed.log) == submitted_params(whole.log));
  CHECK(resumed.summary->best_speedup == whole.summary->best_speedup);
}

TEST_CASE_METHOD(fixture, "the evaluation budget is split among teams") {
  auto opts = options(7);
  opts.teams = 3;
  opts.agents_per_team = 2;
  auto out = run(opts, started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 7);
  auto h = rebuild(out.log);
  REQUIRE(h);
  REQUIRE(h->teams.size() == 3);
  CHECK(h->teams["t1"].scored.size() == 3);
  CHECK(h->teams["t2"].scored.size() == 2);
  CHECK(h->teams["t3"].scored.size() == 2);
}

TEST_CASE_METHOD(fixture, "teams see the whole run's tried configurations: "
                          "no configuration is submitted twice") {
  // 12 of the 15 configurations, by 3 teams each climbing on its own: with
  // each team knowing only its own history they would meet.
  auto opts = options(12);
  opts.teams = 3;
  opts.agent.tuner.explore_rounds = 1;
  auto out = run(opts, started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 12);
  std::set<std::string> configurations;
  for (const auto& p : submitted_params(out.log)) // "t2-c0001:3y"
    configurations.insert(p.substr(p.find(':') + 1));
  CHECK(configurations.size() == 12);
}

namespace {

/// A reply proposing the tiled configuration a, b = x, for 10 tokens.
agent_reply tiled_reply(const assignment& a, const std::string& value) {
  candidate c;
  c.task = a.task.name;
  c.family = "tiled";
  c.params = {{"a", value}, {"b", "x"}};
  c.source = value + " x";
  c.tokens = 10;
  agent_reply reply;
  reply.tokens = 10;
  reply.candidates.push_back(std::move(c));
  return reply;
}

/// An agent that ignores what was tried and always proposes a = 2, b = x;
/// counts its proposals.
agent_actor::behavior_type stubborn_agent(agent_actor::pointer,
                                          std::shared_ptr<int> asked) {
  return {
    [asked](propose_atom, const assignment& a) {
      ++*asked;
      return tiled_reply(a, "2");
    },
  };
}

} // namespace

TEST_CASE_METHOD(fixture, "an agent that repeats a submitted configuration "
                          "is asked again, then its proposal goes through") {
  auto asked = std::make_shared<int>(0);
  make_agent = [asked](caf::actor_system& sys, const std::string&,
                       const std::string&) -> agent_actor {
    return sys.spawn(stubborn_agent, asked);
  };
  auto out = run(options(3), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 3);
  // The first proposal is fresh; each later one collides
  // max_collisions_in_row times before it is submitted anyway.
  CHECK(*asked == 1 + 2 * static_cast<int>(max_collisions_in_row));
  CHECK(count_kind(out.log, event_kind::candidate_submitted) == 3);
}

namespace {

/// An agent whose proposals numbered in `fails` (1-based) end without a
/// candidate, as a cli agent's whose program failed, spending 7 tokens;
/// the others propose a = 1, 2, ... with b = x, for 10 tokens.
agent_actor::behavior_type flaky_agent(
  agent_actor::pointer, std::set<int> fails) {
  auto asked = std::make_shared<int>(0);
  auto proposed = std::make_shared<int>(0);
  return {
    [=](propose_atom, const assignment& a) {
      agent_reply reply;
      if (fails.count(++*asked) > 0) {
        reply.tokens = 7;
        reply.transcript = "attempt " + std::to_string(*asked);
        reply.failure = "claude exited with status 1: overloaded";
        return reply;
      }
      return tiled_reply(a, std::to_string(++*proposed));
    },
  };
}

} // namespace

TEST_CASE_METHOD(fixture, "an agent's failed proposals are logged with their "
                          "tokens and the team asks again") {
  // One failure used to end the team, and with it a one-team run.
  make_agent = [](caf::actor_system& sys, const std::string&,
                 const std::string&) -> agent_actor {
    return sys.spawn(flaky_agent, std::set<int>{1, 2, 4});
  };
  auto out = run(options(3), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 3);
  CHECK(count_kind(out.log, event_kind::proposal_failed) == 3);
  CHECK(out.summary->tokens == 3 * 7 + 3 * 10);
  auto history = run_history{};
  for (const auto& e : out.log)
    REQUIRE(apply(history, e));
  CHECK(history.tokens == 3 * 7 + 3 * 10);
  CHECK(history.teams["t1"].failed_proposals == 3);
  persistence::file_tree files{*out.store};
  auto first = files.get("/teams/t1/failed/0001.md");
  REQUIRE(first);
  CHECK(*first
        == "# agent t1.a1 proposed nothing: claude exited with status 1: "
           "overloaded\n\nattempt 1");
  CHECK(files.get("/teams/t1/failed/0003.md"));
}

TEST_CASE_METHOD(fixture, "a team whose agents fail three times in a row is "
                          "done, saying why") {
  make_agent = [](caf::actor_system& sys, const std::string&,
                 const std::string&) -> agent_actor {
    return sys.spawn(flaky_agent, std::set<int>{2, 3, 4, 5, 6});
  };
  auto out = run(options(10), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 1);
  CHECK(count_kind(out.log, event_kind::proposal_failed) == max_failed_in_row);
  CHECK_THAT(out.summary->reason,
    Catch::Contains("agent t1.a1 proposed nothing: claude exited "
                    "with status 1: overloaded (3 proposals in a "
                    "row failed)"));
  CHECK(out.summary->tokens == 10 + 3 * 7);
}

TEST_CASE_METHOD(fixture, "stop ends the run after the evaluation in flight") {
  auto out = run(options(10), started_log(), fake_mode::normal,
                 [&](supervisor_actor sup) {
    caf::anon_send(sup, stop_atom_v, std::string{"interrupted by SIGINT"});
  });
  REQUIRE(out.summary);
  CHECK(out.summary->reason == "interrupted by SIGINT");
  CHECK(out.summary->evaluations <= 1);
  CHECK(out.log.back().kind == event_kind::run_finished);
}

TEST_CASE_METHOD(fixture, "a failing device ends the run with its reason") {
  auto out = run(options(4), started_log(), fake_mode::broken);
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 0);
  CHECK_THAT(out.summary->reason, Catch::Contains("device failed"));
  CHECK_THAT(out.summary->reason, Catch::Contains("fake device is broken"));
}

TEST_CASE_METHOD(fixture, "a team stops when its agent has tried everything") {
  auto out = run(options(40), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 15); // the whole 5 x 3 space
  CHECK_THAT(out.summary->reason, Catch::Contains("has been tried"));
  CHECK(out.summary->best_speedup == 4.5); // a=4, b=y; a=5 fails its check
}

TEST_CASE_METHOD(fixture, "a run whose budget is spent finishes at once") {
  auto whole = run(options(2), started_log());
  REQUIRE(whole.summary);
  auto again = run(options(2), whole.log);
  REQUIRE(again.summary);
  CHECK(again.summary->evaluations == 2);
  CHECK(evaluated_ids(again.log).size() == 2);
}

TEST_CASE("noise is not progress: a gain inside the interval does not count") {
  eval_result best;
  best.status = eval_status::passed;
  best.geomean_speedup = 2.0;
  eval_result r = best;
  workload_result w;
  w.speedup = 2.2;
  w.speedup_low = 1.9; // the interval still includes the best
  w.speedup_high = 2.5;
  r.workloads = {w};
  r.geomean_speedup = 2.2;
  CHECK_FALSE(improves(r, best, 0.02));
  r.workloads[0].speedup_low = 2.1;
  CHECK(improves(r, best, 0.02));
  r.geomean_speedup = 2.01; // within the threshold
  CHECK_FALSE(improves(r, best, 0.02));
  r.status = eval_status::incorrect;
  CHECK_FALSE(improves(r, best, 0.02));
}

TEST_CASE_METHOD(fixture, "a run stops once its best reaches the target "
                          "speedup") {
  auto opts = options(40);
  opts.target_speedup = 3.0;
  auto out = run(opts, started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->best_speedup >= 3.0);
  CHECK(out.summary->evaluations < 15); // it did not have to try everything
  CHECK_THAT(out.summary->reason, Catch::StartsWith("target speedup reached ("));
  CHECK_THAT(out.summary->reason, Catch::EndsWith(">= 3.00x)"));
}

TEST_CASE_METHOD(fixture, "a run stops once its best kernel reaches the "
                          "target fraction of speed of light everywhere") {
  auto opts = options(40);
  opts.target_sol_fraction = 0.5; // the fake device reports 0.6 from a >= 4
  auto out = run(opts, started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->reason == "target fraction of speed of light reached");
  for (const auto& w : out.summary->best_workloads)
    CHECK(w.sol_fraction >= 0.5);
}
