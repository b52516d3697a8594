// Specification of the device pool over fake and sim devices. The pool's
// device actors and compile workers are detached (threads), so these tests
// run on CAF's normal scheduler and synchronise on replies and on the fake
// device's gate (a condition variable), never on sleeps.

#include <catch2/catch.hpp>

#include <climits>

#include "devices/sim_device.hpp"
#include "tests/actors/pool_fixture.hpp"

using namespace eat;
using namespace eat::test;

TEST_CASE("a device never runs two jobs at once") {
  fixture f;
  f.start(2);
  std::vector<candidate> cs;
  for (int i = 0; i < 30; ++i)
    cs.push_back(make("c" + std::to_string(i), "t" + std::to_string(i % 3)));
  auto results = f.evaluate(cs);
  REQUIRE(results.size() == 30);
  for (size_t i = 0; i < results.size(); ++i) {
    CHECK(results[i].status == eval_status::passed);
    CHECK(results[i].candidate == cs[i].id);
  }
  CHECK(f.ctl[0]->max_inside == 1);
  CHECK(f.ctl[1]->max_inside == 1);
  CHECK(f.ctl[0]->runs() + f.ctl[1]->runs() == 30);
}

TEST_CASE("compile failures are answered without occupying a device") {
  fixture f;
  f.start(1);
  auto bad = make("c1", "t1");
  bad.source = "#error no";
  auto results = f.evaluate({bad});
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == eval_status::compile_error);
  CHECK(results[0].build_log == "error: #error");
  CHECK(f.ctl[0]->prepares == 1);
  CHECK(f.ctl[0]->runs() == 0);
  CHECK(f.status().devices.at(0).evaluations == 0);
}

TEST_CASE("a task no device can run is rejected at once") {
  fixture f;
  f.start(1);
  auto task = cpu_task();
  task.backend = "cuda";
  auto results = f.evaluate({make("c1", "t1")}, task);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == eval_status::rejected);
  CHECK(results[0].detail == "no device of kind cuda in this run");
  CHECK(f.ctl[0]->prepares == 0);
}

TEST_CASE("sim devices take tasks of any backend") {
  fixture f;
  f.start(1, {}, "sim");
  auto task = cpu_task();
  task.backend = "hip";
  auto results = f.evaluate({make("c1", "t1")}, task);
  CHECK(results.at(0).status == eval_status::passed);
}

TEST_CASE("a device failing health checks is drained and others do the work") {
  fixture f;
  caf::scoped_actor watcher{*f.sys};
  pool_options opts;
  opts.drain_after = 3;
  opts.listener = caf::actor_cast<listener_actor>(watcher);
  f.ctl.push_back(std::make_shared<fake_control>());
  f.ctl.push_back(std::make_shared<fake_control>());
  f.ctl[0]->healthy = false;
  f.start_over({std::make_shared<fake_device>("dev0", "cpu", f.ctl[0]),
                 std::make_shared<fake_device>("dev1", "cpu", f.ctl[1])},
    opts);
  std::vector<candidate> cs;
  for (int i = 0; i < 8; ++i)
    cs.push_back(make("c" + std::to_string(i), "t1"));
  for (const auto& r : f.evaluate(cs))
    CHECK(r.status == eval_status::passed);
  CHECK(f.ctl[0]->runs() == 0);
  CHECK(f.ctl[1]->runs() == 8);
  // The run's listener is told. Waited for before the status is asked:
  // under load dev1 did all 8 before dev0's third check came back (CI).
  std::string notice;
  watcher->receive(
    [&](restructure_atom, const std::string& text) {
      notice = text;
    },
    caf::after(std::chrono::seconds{30}) >> [] { FAIL("no notice"); });
  CHECK(notice
        == "device dev0 drained: dev0 is on fire; 1 cpu device left takes its "
           "work\n");
  auto st = f.status();
  CHECK(st.devices[0].drained);
  CHECK(st.devices[0].failed_checks == 3);
  CHECK(st.devices[0].why == "dev0 is on fire");
  CHECK_FALSE(st.devices[1].drained);
}

TEST_CASE("with every device drained, waiting work fails with the reason") {
  fixture f;
  devices::sim_options sim;
  sim.fail_health_after = 1;
  pool_options opts;
  opts.ahead = 4;
  f.start_over({devices::make_sim_device("sim0", sim)}, opts);
  std::vector<candidate> cs;
  for (int i = 0; i < 5; ++i)
    cs.push_back(make("c" + std::to_string(i), "t1"));
  auto results = f.evaluate(cs);
  REQUIRE(results.size() == 5);
  int passed = 0;
  for (const auto& r : results) {
    if (r.status == eval_status::passed) {
      passed += 1;
      continue;
    }
    CHECK(r.status == eval_status::runtime_error);
    CHECK_THAT(r.detail, Catch::StartsWith("no healthy device of kind sim: "
                                           "sim0: sim0 fails its health"));
  }
  CHECK(passed == 1);
  CHECK(drain_notice("sim0", "sim0 fails its health check", "sim", 0)
        == "device sim0 drained: sim0 fails its health check; no sim device "
           "is left: its kind's work fails");
  CHECK(drain_notice("cpu2", "why", "cpu", 2)
        == "device cpu2 drained: why; 2 cpu devices left take its work");
  auto late = f.evaluate({make("c9", "t1")});
  CHECK(late.at(0).status == eval_status::runtime_error);
  CHECK(f.status().devices.at(0).drained);
}

TEST_CASE("compile workers run on the cores they are given, off the "
          "devices' cores") {
  fixture f;
  pool_options opts;
  opts.compile_cores = {0};
  f.start(1, opts);
  REQUIRE(f.evaluate({make("c1", "t1")}).at(0).status == eval_status::passed);
  std::lock_guard<std::mutex> guard{f.ctl[0]->mtx};
  CHECK(f.ctl[0]->prepare_cores == std::vector<int>{0});
}

TEST_CASE("status reports queue depth per team and busy time") {
  fixture f;
  f.start(1);
  f.ctl[0]->allow(0);
  std::vector<candidate> cs;
  for (int i = 0; i < 5; ++i)
    cs.push_back(make("c" + std::to_string(i), i < 3 ? "t1" : "t2"));
  auto task = cpu_task();
  using handle = decltype((*f.self)->request(
    f.pool, caf::infinite, evaluate_atom_v, task, candidate{}, uint64_t{0}));
  std::vector<handle> handles;
  for (auto& c : cs)
    handles.push_back((*f.self)->request(
      f.pool, caf::infinite, evaluate_atom_v, task, c, uint64_t{1}));
  f.ctl[0]->wait_entered(1);
  auto busy = f.status();
  CHECK(total(busy.queued) == 4);
  CHECK(busy.queued.size() == 2);
  CHECK(busy.devices.at(0).evaluations == 0);
  f.ctl[0]->allow(INT_MAX);
  for (auto& h : handles)
    h.receive(
      [](eval_result& r) {
        CHECK(r.status == eval_status::passed);
      },
      [](caf::error& err) {
        FAIL(render(err));
      });
  auto done = f.status();
  CHECK(done.queued.empty());
  REQUIRE(done.devices.size() == 1);
  CHECK(done.devices[0].device == "dev0");
  CHECK(done.devices[0].kind == "cpu");
  CHECK(done.devices[0].evaluations == 5);
  CHECK(done.devices[0].busy_s > 0);
  CHECK(done.devices[0].wall_s >= done.devices[0].busy_s);
}

TEST_CASE("a slice past its deadline times out and the device is not "
          "double-booked") {
  fixture f;
  pool_options opts;
  opts.slice_timeout_s = 0.05;
  // One compile worker: c1 is ready (and runs) before c2.
  opts.compile_workers = 1;
  f.start(1, opts);
  f.ctl[0]->allow(0);
  auto task = cpu_task();
  auto first = (*f.self)->request(f.pool, caf::infinite, evaluate_atom_v, task,
    make("c1", "t1"), uint64_t{1});
  auto second = (*f.self)->request(f.pool, caf::infinite, evaluate_atom_v, task,
    make("c2", "t1"), uint64_t{2});
  first.receive(
    [](eval_result& r) {
      CHECK(r.status == eval_status::timeout);
      CHECK_THAT(r.detail, Catch::Contains("slice deadline"));
    },
    [](caf::error& err) {
      FAIL(render(err));
    });
  // The device is still blocked in the first run: the second job waits.
  CHECK(f.status().queued.at("t1") == 1);
  f.ctl[0]->allow(INT_MAX);
  second.receive(
    [](eval_result& r) {
      CHECK(r.status == eval_status::passed);
    },
    [](caf::error& err) {
      FAIL(render(err));
    });
  CHECK(f.ctl[0]->max_inside == 1);
  CHECK(f.ctl[0]->runs() == 2);
}

TEST_CASE("stopping the pool answers waiting requests with run_stopped") {
  fixture f;
  f.start(1);
  f.ctl[0]->allow(0);
  auto task = cpu_task();
  auto first = (*f.self)->request(f.pool, caf::infinite, evaluate_atom_v, task,
    make("c1", "t1"), uint64_t{1});
  auto second = (*f.self)->request(f.pool, caf::infinite, evaluate_atom_v, task,
    make("c2", "t1"), uint64_t{2});
  f.ctl[0]->wait_entered(1);
  (*f.self)->send_exit(f.pool, caf::exit_reason::user_shutdown);
  f.ctl[0]->allow(INT_MAX);
  for (auto* h : {&first, &second})
    h->receive(
      [](eval_result&) {
        FAIL("answered after stop");
      },
      [](caf::error& err) {
        CHECK(code_of(err) == error::run_stopped);
      });
  f.stopped = true;
}

TEST_CASE("hundreds of teams share a pool of sim devices") {
  fixture f;
  std::vector<std::shared_ptr<devices::device>> devs;
  for (int i = 0; i < 4; ++i) {
    devices::sim_options sim;
    sim.seed = static_cast<uint64_t>(i);
    devs.push_back(devices::make_sim_device("sim" + std::to_string(i), sim));
  }
  f.start_over(std::move(devs), {});
  std::vector<candidate> cs;
  for (int team = 0; team < 200; ++team)
    for (int n = 0; n < 3; ++n)
      cs.push_back(make("t" + std::to_string(team) + "-c" + std::to_string(n),
        "t" + std::to_string(team)));
  auto results = f.evaluate(cs);
  REQUIRE(results.size() == 600);
  for (const auto& r : results)
    REQUIRE(r.status == eval_status::passed);
  auto st = f.status();
  CHECK(st.queued.empty());
  uint64_t evaluations = 0;
  for (const auto& d : st.devices) {
    CHECK(d.kind == "sim");
    CHECK(d.evaluations > 0);
    evaluations += d.evaluations;
  }
  CHECK(evaluations == 600);
}
