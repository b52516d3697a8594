// Specification of the sim device: a deterministic timing model.

#include <catch2/catch.hpp>

#include <cmath>

#include "devices/sim_device.hpp"

using namespace eat;
using namespace eat::devices;

namespace {

task_spec sim_task() {
  task_spec t;
  t.name = "sgemm";
  t.kind = "gemm";
  t.backend = "cuda";
  t.workloads = {{"small", {{"m", 8}}}, {"large", {{"m", 64}}}};
  t.families = {{"tiled", "{{a}} {{b}}",
    {{"a", {"1", "2", "3", "4", "5", "6"}}, {"b", {"x", "y", "z"}}}}};
  return t;
}

candidate sim_candidate(std::string id, std::string a, std::string b) {
  candidate c;
  c.id = std::move(id);
  c.team = "t1";
  c.task = "sgemm";
  c.family = "tiled";
  c.params = {{"a", std::move(a)}, {"b", std::move(b)}};
  c.source = "kernel " + c.params["a"] + c.params["b"];
  return c;
}

sim_options quiet(double noise, uint64_t seed = 7) {
  sim_options o;
  o.noise = noise;
  o.seed = seed;
  return o;
}

} // namespace

TEST_CASE("a sim device reports kind sim and passes a well-formed candidate") {
  auto dev = make_sim_device("sim0", quiet(0.01));
  CHECK(dev->caps().kind == "sim");
  CHECK(dev->id() == "sim0");
  auto r = dev->evaluate(sim_task(), sim_candidate("c1", "3", "y"), 42);
  CHECK(r.status == eval_status::passed);
  CHECK(r.candidate == "c1");
  CHECK(r.seed == 42);
  REQUIRE(r.workloads.size() == 2);
  CHECK(r.workloads[0].baseline_median_ns == 1e6);
  CHECK(r.geomean_speedup > 0);
  CHECK(r.source_hash.size() == 64);
}

TEST_CASE("the sim device is deterministic given its seed and the inputs") {
  auto a = make_sim_device("sim0", quiet(0.05, 7));
  auto b = make_sim_device("sim1", quiet(0.05, 7));
  auto c = make_sim_device("sim2", quiet(0.05, 8));
  auto task = sim_task();
  auto cand = sim_candidate("c1", "2", "x");
  auto ra = a->evaluate(task, cand, 42);
  auto rb = b->evaluate(task, cand, 42);
  auto rc = c->evaluate(task, cand, 42);
  auto rd = a->evaluate(task, cand, 43);
  CHECK(ra.geomean_speedup == rb.geomean_speedup);
  CHECK(ra.geomean_speedup != rc.geomean_speedup);
  CHECK(ra.geomean_speedup != rd.geomean_speedup);
}

TEST_CASE("sim noise stays within three standard deviations") {
  const double noise = 0.1;
  auto dev = make_sim_device("sim0", quiet(noise));
  auto task = sim_task();
  auto cand = sim_candidate("c1", "4", "z");
  auto truth = sim_landscape(task, cand, 3);
  double lo = 1e9;
  double hi = 0;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    auto r = dev->evaluate(task, cand, seed);
    for (const auto& w : r.workloads) {
      // speedup = truth / factor, factor in [1 - 3 noise, 1 + 3 noise].
      auto factor = truth / w.speedup;
      CHECK(factor >= 1 - 3 * noise - 1e-12);
      CHECK(factor <= 1 + 3 * noise + 1e-12);
      lo = std::min(lo, factor);
      hi = std::max(hi, factor);
    }
  }
  // The noise is real: it spreads over more than one sigma each way.
  CHECK(lo < 1 - noise);
  CHECK(hi > 1 + noise);
}

TEST_CASE("the sim landscape peaks at one hidden optimum and is smooth") {
  auto task = sim_task();
  double best = 0;
  int peaks = 0;
  for (const auto& a : task.families[0].params[0].values)
    for (const auto& b : task.families[0].params[1].values) {
      auto s = sim_landscape(task, sim_candidate("c", a, b), 3);
      CHECK(s >= 1);
      CHECK(s <= 3);
      peaks += s == 3 ? 1 : 0;
      best = std::max(best, s);
    }
  CHECK(best == 3);
  CHECK(peaks == 1);
  candidate plain;
  plain.family = "custom";
  CHECK(sim_landscape(task, plain, 3) == 1);
}

TEST_CASE("a sim candidate with #error fails to compile") {
  auto dev = make_sim_device("sim0", quiet(0.01));
  auto cand = sim_candidate("c1", "1", "x");
  cand.source = "#error nope";
  auto objects = dev->prepare(sim_task(), cand);
  CHECK(objects.status == eval_status::compile_error);
  CHECK_FALSE(objects.build_log.empty());
  auto r = dev->run(sim_task(), cand, objects, 1);
  CHECK(r.status == eval_status::compile_error);
  CHECK(r.workloads.empty());
}

TEST_CASE("a sim device fails health checks after fail_health_after runs") {
  auto opts = quiet(0.01);
  opts.fail_health_after = 2;
  auto dev = make_sim_device("sim0", opts);
  auto task = sim_task();
  CHECK(dev->check_health().empty());
  dev->evaluate(task, sim_candidate("c1", "1", "x"), 1);
  CHECK(dev->check_health().empty());
  dev->evaluate(task, sim_candidate("c2", "1", "x"), 1);
  CHECK_THAT(dev->check_health(), Catch::Contains("after 2 runs"));
}
