// Specification of a run's actors (supervisor, teams, builtin agents) under
// CAF's deterministic test scheduler, with an in-memory store and a fake
// device whose speedup is a function of the kernel's parameters.

#include <catch2/catch.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <set>

#include "actors/protocol/wire.hpp"
#include "actors/supervisor.hpp"
#include "runtime/system_setup.hpp"
#include "tests/actors/protocol/samples.hpp"

using namespace eat;

namespace {

struct memory_store_state {
  std::vector<event> events;
  static inline const char* name = "test.memory_store";
};

store_actor::behavior_type
memory_store(store_actor::stateful_pointer<memory_store_state> self,
             std::vector<event> initial) {
  self->state.events = std::move(initial);
  return {
    [=](append_atom, event e) -> uint64_t {
      e.seq = self->state.events.size() + 1;
      self->state.events.push_back(e);
      return e.seq;
    },
    [=](read_atom, uint64_t from) {
      std::vector<event> out;
      for (const auto& e : self->state.events)
        if (e.seq >= from)
          out.push_back(e);
      return out;
    },
  };
}

/// Passes every candidate; speedup = a + (b == "y" ? 0.5 : 0). A candidate
/// with a = "5" fails its check. With `broken`, every request fails.
device_actor::behavior_type fake_device(device_actor::pointer, bool broken) {
  return {
    [=](evaluate_atom, const task_spec&, const candidate& c,
        uint64_t seed) -> caf::result<eval_result> {
      if (broken)
        return make_error(error::device_unavailable, "fake device is broken");
      eval_result r;
      r.candidate = c.id;
      r.seed = seed;
      if (c.params.at("a") == "5") {
        r.status = eval_status::incorrect;
        return r;
      }
      r.status = eval_status::passed;
      r.geomean_speedup = std::stod(c.params.at("a"))
                          + (c.params.at("b") == "y" ? 0.5 : 0.0);
      return r;
    },
  };
}

listener_actor::behavior_type quiet_listener(listener_actor::pointer) {
  return {[](progress_atom, const team_progress&) {}};
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;

  fixture() {
    configure_actor_system(cfg);
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }

  static task_spec task() {
    auto t = sample_task();
    t.families = {{"tiled",
                   "{{a}} {{b}}",
                   {{"a", {"1", "2", "3", "4", "5"}}, {"b", {"x", "y", "z"}}}}};
    return t;
  }

  static std::vector<event> started_log() {
    run_started s;
    s.run_id = "test-run";
    s.task = "sgemm";
    s.spec = task();
    event e;
    e.seq = 1;
    e.kind = event_kind::run_started;
    e.body = wire::encode(s);
    return {e};
  }

  static supervisor_options options(uint64_t max_evaluations) {
    supervisor_options o;
    o.task = task();
    o.seed = 11;
    o.max_evaluations = max_evaluations;
    o.agent.tuner.explore_rounds = 3;
    return o;
  }

  struct outcome {
    caf::expected<run_summary> summary = caf::error{};
    std::vector<event> log;
  };

  /// Runs a supervisor over `log` until it replies; `before_run` may send
  /// messages to the supervisor first.
  outcome run(supervisor_options opts, std::vector<event> log,
              bool broken_device = false,
              std::function<void(supervisor_actor)> before_run = {}) {
    auto history = rebuild(log);
    REQUIRE(history);
    auto store = sys->spawn(memory_store, std::move(log));
    supervisor_links links{store, {sys->spawn(fake_device, broken_device)},
                           sys->spawn(quiet_listener)};
    auto sup = sys->spawn(supervisor, std::move(opts), links, *history);
    outcome out;
    caf::scoped_actor self{*sys};
    auto summary = self->request(sup, caf::infinite, run_atom_v);
    if (before_run)
      before_run(sup);
    sched->run();
    summary.receive([&](run_summary& s) { out.summary = std::move(s); },
                    [&](caf::error& err) { out.summary = err; });
    auto events = self->request(store, caf::infinite, read_atom_v, uint64_t{1});
    sched->run();
    events.receive([&](std::vector<event>& xs) { out.log = xs; },
                   [&](caf::error& err) { FAIL(render(err)); });
    for (auto& d : links.devices)
      self->send_exit(d, caf::exit_reason::user_shutdown);
    self->send_exit(store, caf::exit_reason::user_shutdown);
    self->send_exit(links.listener, caf::exit_reason::user_shutdown);
    sched->run();
    return out;
  }
};

std::vector<std::string> evaluated_ids(const std::vector<event>& log) {
  std::vector<std::string> out;
  for (const auto& e : log)
    if (e.kind == event_kind::evaluation_finished)
      out.push_back(wire::decode<eval_result>(e.body)->candidate);
  return out;
}

std::vector<std::string> submitted_params(const std::vector<event>& log) {
  std::vector<std::string> out;
  for (const auto& e : log)
    if (e.kind == event_kind::candidate_submitted) {
      auto c = wire::decode<candidate>(e.body);
      out.push_back(c->id + ":" + c->params.at("a") + c->params.at("b"));
    }
  return out;
}

} // namespace

TEST_CASE_METHOD(fixture, "a run evaluates exactly max_evaluations candidates, "
                          "logging each before and after evaluation") {
  auto out = run(options(6), started_log());
  REQUIRE(out.summary);
  CHECK(out.summary->evaluations == 6);
  CHECK(out.summary->reason == "max_evaluations reached (6)");
  // run_started, team_spawned, 6 x (submitted, finished), run_finished
  REQUIRE(out.log.size() == 15);
  CHECK(out.log[1].kind == event_kind::team_spawned);
  for (size_t i = 2; i < 14; i += 2) {
    CHECK(out.log[i].kind == event_kind::candidate_submitted);
    CHECK(out.log[i + 1].kind == event_kind::evaluation_finished);
  }
  CHECK(out.log.back().kind == event_kind::run_finished);
  auto h = rebuild(out.log);
  REQUIRE(h);
  CHECK(h->finished);
  CHECK(h->best_speedup == out.summary->best_speedup);
  CHECK(h->best_candidate == out.summary->best_candidate);
  auto ids = evaluated_ids(out.log);
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 6);
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

TEST_CASE_METHOD(fixture, "stop ends the run after the evaluation in flight") {
  auto out = run(options(10), started_log(), false, [&](supervisor_actor sup) {
    caf::anon_send(sup, stop_atom_v, std::string{"interrupted by SIGINT"});
  });
  REQUIRE(out.summary);
  CHECK(out.summary->reason == "interrupted by SIGINT");
  CHECK(out.summary->evaluations <= 1);
  CHECK(out.log.back().kind == event_kind::run_finished);
}

TEST_CASE_METHOD(fixture, "a failing device ends the run with its reason") {
  auto out = run(options(4), started_log(), true);
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
