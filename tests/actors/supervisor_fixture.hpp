// The fixture of the supervisor's specifications: a run's actors
// (supervisor, teams, builtin agents) under CAF's deterministic test
// scheduler, with the real store actor over a temporary LMDB store (spawned
// non-detached, so the scheduler controls it) and a fake device whose
// speedup is a function of the kernel's parameters.

#pragma once

#include <catch2/catch.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>
#include <set>

#include "actors/protocol/wire.hpp"
#include "actors/store_server.hpp"
#include "actors/supervisor.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/fsck.hpp"
#include "runtime/system_setup.hpp"
#include "tests/actors/protocol/samples.hpp"
#include "tests/support/temp_dir.hpp"

namespace eat::test {

/// How the fake device behaves.
enum class fake_mode {
  /// Speedup a + (b == "y" ? 0.5 : 0); a candidate with a = "5" is
  /// incorrect.
  normal,
  /// Every request fails.
  broken,
  /// Every candidate passes with 2x: no team can improve.
  flat,
};

inline device_actor::behavior_type fake_device(device_actor::pointer, fake_mode mode) {
  return {
    [=](evaluate_atom, const task_spec&, const candidate& c,
        uint64_t seed) -> caf::result<eval_result> {
      if (mode == fake_mode::broken)
        return make_error(error::device_unavailable, "fake device is broken");
      eval_result r;
      r.candidate = c.id;
      r.seed = seed;
      if (mode == fake_mode::normal && c.params.at("a") == "5") {
        r.status = eval_status::incorrect;
        return r;
      }
      r.status = eval_status::passed;
      r.geomean_speedup = mode == fake_mode::flat
                            ? 2.0
                            : std::stod(c.params.at("a"))
                                + (c.params.at("b") == "y" ? 0.5 : 0.0);
      workload_result w;
      w.workload = "w";
      w.status = eval_status::passed;
      w.speedup = r.geomean_speedup;
      w.speedup_low = 0.97 * w.speedup;
      w.speedup_high = 1.03 * w.speedup;
      w.sol_fraction = r.geomean_speedup >= 4 ? 0.6 : 0.1;
      r.workloads.push_back(w);
      return r;
    },
  };
}

inline listener_actor::behavior_type quiet_listener(listener_actor::pointer) {
  return {[](progress_atom, const team_progress&) {},
          [](restructure_atom, const std::string&) {}};
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
    o.plateau.window = 0; // off, except where a test turns it on
    return o;
  }

  struct outcome {
    caf::expected<run_summary> summary = caf::error{};
    std::vector<event> log;
    std::shared_ptr<persistence::store> store;
  };

  /// A fresh store under a temporary directory holding `log`.
  struct temp_store {
    test::temp_dir dir;
    std::shared_ptr<persistence::store> store;
    std::shared_ptr<persistence::run_writer> writer;

    explicit temp_store(std::vector<event> log) {
      auto s = persistence::store::open(dir.path());
      REQUIRE(s);
      store = std::move(*s);
      auto w = persistence::run_writer::open(*store);
      REQUIRE(w);
      writer = std::move(*w);
      for (auto& e : log) {
        e.seq = 0;
        REQUIRE(writer->commit({e}, {}));
      }
    }
    ~temp_store() {
      writer.reset(); // close the store before its directory goes
      store.reset();
    }
  };

  std::vector<std::unique_ptr<temp_store>> stores;

  /// Agents and planner the next run() uses (empty: builtin agents, no
  /// planner).
  agent_factory make_agent;
  planner_actor planner;

  /// Runs a supervisor over `log` until it replies; `before_run` may send
  /// messages to the supervisor first.
  outcome run(supervisor_options opts, std::vector<event> log,
              fake_mode mode = fake_mode::normal,
              std::function<void(supervisor_actor)> before_run = {}) {
    stores.push_back(std::make_unique<temp_store>(std::move(log)));
    auto& ts = *stores.back();
    auto store = sys->spawn(store_server, ts.store, ts.writer);
    supervisor_links links{store,
                           {sys->spawn(fake_device, mode)},
                           {"fake0"},
                           sys->spawn(quiet_listener),
                           make_agent,
                           planner};
    auto sup = sys->spawn(supervisor, std::move(opts), links,
                          ts.writer->history());
    outcome out;
    out.store = ts.store;
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

inline size_t count_kind(const std::vector<event>& log, event_kind kind) {
  return static_cast<size_t>(std::count_if(
    log.begin(), log.end(), [&](const event& e) { return e.kind == kind; }));
}

inline std::vector<std::string> evaluated_ids(const std::vector<event>& log) {
  std::vector<std::string> out;
  for (const auto& e : log)
    if (e.kind == event_kind::evaluation_finished)
      out.push_back(wire::decode<eval_result>(e.body)->candidate);
  return out;
}

inline std::vector<std::string> submitted_params(const std::vector<event>& log) {
  std::vector<std::string> out;
  for (const auto& e : log)
    if (e.kind == event_kind::candidate_submitted) {
      auto c = wire::decode<candidate>(e.body);
      out.push_back(c->id + ":" + c->params.at("a") + c->params.at("b"));
    }
  return out;
}

} // namespace eat::test
