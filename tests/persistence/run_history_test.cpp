// Specification of the run history: the state of a run as a pure function
// of its event log.

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/run_history.hpp"
#include "tests/actors/protocol/samples.hpp"

using namespace eat;

namespace {

struct log_builder {
  std::vector<event> events;

  template <class T>
  log_builder& add(event_kind kind, const T& body) {
    event e;
    e.seq = events.size() + 1;
    e.kind = kind;
    e.body = wire::encode(body);
    events.push_back(std::move(e));
    return *this;
  }

  log_builder& start() {
    run_started s;
    s.run_id = "r1";
    s.task = "sgemm";
    s.max_evaluations = 10;
    add(event_kind::run_started, s);
    team_spawned t;
    t.team = "t1";
    t.strategy = "local";
    return add(event_kind::team_spawned, t);
  }

  log_builder& submit(const std::string& id, uint64_t tokens = 1000) {
    auto c = sample_candidate();
    c.id = id;
    c.tokens = tokens;
    return add(event_kind::candidate_submitted, c);
  }

  log_builder& evaluate(const std::string& id, eval_status status,
                        double speedup) {
    eval_result r;
    r.candidate = id;
    r.status = status;
    r.geomean_speedup = speedup;
    return add(event_kind::evaluation_finished, r);
  }
};

} // namespace

TEST_CASE("an empty log is a run that has not started") {
  auto h = rebuild({});
  REQUIRE(h);
  CHECK_FALSE(h->started);
  CHECK(h->evaluations == 0);
}

TEST_CASE("rebuilding counts evaluations, tokens and the best candidate") {
  log_builder log;
  log.start()
    .submit("t1-c0001")
    .evaluate("t1-c0001", eval_status::passed, 2.0)
    .submit("t1-c0002")
    .evaluate("t1-c0002", eval_status::compile_error, 0)
    .submit("t1-c0003")
    .evaluate("t1-c0003", eval_status::passed, 3.5)
    .submit("t1-c0004")
    .evaluate("t1-c0004", eval_status::passed, 3.0);
  auto h = rebuild(log.events);
  REQUIRE(h);
  CHECK(h->started);
  CHECK(h->evaluations == 4);
  CHECK(h->passed == 3);
  CHECK(h->tokens == 4000);
  CHECK(h->best_candidate == "t1-c0003");
  CHECK(h->best_speedup == 3.5);
  REQUIRE(h->teams.count("t1") == 1);
  CHECK(h->teams["t1"].scored.size() == 4);
  CHECK(h->teams["t1"].scored[1].speedup == 0); // failed: no speedup
  CHECK(h->teams["t1"].unfinished.empty());
  auto s = summarize(*h, "done");
  CHECK(s.best_team == "t1");
  CHECK(s.evaluations == 4);
  CHECK(s.reason == "done");
}

TEST_CASE("a candidate submitted but never evaluated is unfinished") {
  log_builder log;
  log.start().submit("t1-c0001").evaluate("t1-c0001", eval_status::passed, 2)
    .submit("t1-c0002");
  auto h = rebuild(log.events);
  REQUIRE(h);
  CHECK(h->evaluations == 1);
  REQUIRE(h->teams["t1"].unfinished.size() == 1);
  CHECK(h->teams["t1"].unfinished[0].id == "t1-c0002");
  CHECK(h->teams["t1"].submitted == 2);
}

TEST_CASE("a failed proposal counts its tokens for its team and the run") {
  log_builder log;
  log.start().submit("t1-c0001", 500);
  log.add(event_kind::proposal_failed,
    proposal_failed{"t1", "t1.a1", "timed out after 1800 s", 300, {}});
  auto h = rebuild(log.events);
  REQUIRE(h);
  CHECK(h->tokens == 800);
  CHECK(h->teams["t1"].tokens == 800);
  CHECK(h->teams["t1"].failed_proposals == 1);
  CHECK(h->teams["t1"].submitted == 1);
  log.add(event_kind::proposal_failed,
    proposal_failed{"t9", "t9.a1", "no kernel.cpp", 1, {}});
  auto bad = rebuild(log.events);
  REQUIRE_FALSE(bad);
  CHECK_THAT(
    render(bad.error()), Catch::Contains("failed proposal of unknown team t9"));
}

TEST_CASE("a kernel an agent benchmarked with ./eval counts for its team, "
          "not as a candidate") {
  log_builder log;
  log.start().submit("t1-c0001", 500);
  eval_result r;
  r.candidate = "t1-t1_a1-1-eval1";
  r.status = eval_status::passed;
  r.geomean_speedup = 9;
  log.add(event_kind::agent_evaluated, agent_evaluated{"t1", "t1.a1", r});
  auto h = rebuild(log.events);
  REQUIRE(h);
  CHECK(h->teams["t1"].agent_evaluations == 1);
  CHECK(h->evaluations == 0);
  CHECK(h->results.count("t1-t1_a1-1-eval1") == 0);
  CHECK(h->teams["t1"].submitted == 1);
  log.add(event_kind::agent_evaluated, agent_evaluated{"t9", "t9.a1", r});
  auto bad = rebuild(log.events);
  REQUIRE_FALSE(bad);
  CHECK_THAT(render(bad.error()), Catch::Contains("./eval of unknown team t9"));
}

TEST_CASE("run_finished and run_resumed set whether the run is finished") {
  log_builder log;
  log.start().add(event_kind::run_finished, sample_summary());
  auto h = rebuild(log.events);
  REQUIRE(h);
  CHECK(h->finished);
  CHECK(h->last_summary.reason == sample_summary().reason);
  log.add(event_kind::run_resumed, run_resumed{2, 0});
  h = rebuild(log.events);
  REQUIRE(h);
  CHECK_FALSE(h->finished);
  CHECK(h->resumes == 1);
}

TEST_CASE("a log that does not fit together is rejected") {
  SECTION("a gap in the sequence") {
    log_builder log;
    log.start().submit("t1-c0001");
    log.events.back().seq += 1;
    auto h = rebuild(log.events);
    REQUIRE(!h);
    CHECK_THAT(render(h.error()), Catch::Contains("expected sequence number 3"));
  }
  SECTION("a log that does not begin with run_started") {
    log_builder log;
    log.add(event_kind::run_resumed, run_resumed{});
    CHECK(!rebuild(log.events));
  }
  SECTION("a result for an unknown candidate") {
    log_builder log;
    log.start().evaluate("t1-c0009", eval_status::passed, 2);
    auto h = rebuild(log.events);
    REQUIRE(!h);
    CHECK_THAT(render(h.error()), Catch::Contains("unknown candidate t1-c0009"));
  }
  SECTION("a candidate evaluated twice") {
    log_builder log;
    log.start().submit("t1-c0001").evaluate("t1-c0001", eval_status::passed, 2)
      .evaluate("t1-c0001", eval_status::passed, 2);
    CHECK(!rebuild(log.events));
  }
  SECTION("a body that does not decode") {
    log_builder log;
    log.start().submit("t1-c0001");
    log.events.back().body = "garbage";
    auto h = rebuild(log.events);
    REQUIRE(!h);
    CHECK_THAT(render(h.error()), Catch::Contains("event 3"));
  }
}
