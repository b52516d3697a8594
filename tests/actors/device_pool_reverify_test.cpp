// Specification of re-verification (BENCHMARK-PROTOCOL.md section 4): which
// passed results the pool runs again in a fresh process, and when the two
// runs agree. Over fake devices whose candidates choose their speedups.

#include <catch2/catch.hpp>

#include "tests/actors/pool_fixture.hpp"

using namespace eat;
using namespace eat::test;

TEST_CASE("a suspicious speedup is re-verified on another device") {
  fixture f;
  f.start(2);
  auto confirmed = make("c1", "t1", {{"speedup", "5"}, {"again", "4.8"}});
  auto results = f.evaluate({confirmed});
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == eval_status::passed);
  CHECK(results[0].geomean_speedup == 5);
  CHECK_THAT(results[0].method,
    Catch::Contains("; re-verified in a fresh process with seed "
                    + std::to_string(reverify_seed(100)) + ": 4.80x"));
  // Two runs, one on each device, the second with the derived seed.
  CHECK(f.ctl[0]->runs() == 1);
  CHECK(f.ctl[1]->runs() == 1);
  // 5x is now the best: 8x is below 3 x 5 and below 10x the baseline, and
  // is not re-verified.
  auto plain = make("c2", "t1", {{"speedup", "8"}});
  CHECK(f.evaluate({plain}).at(0).status == eval_status::passed);
  CHECK(f.ctl[0]->runs() + f.ctl[1]->runs() == 3);
  // 12x is below 3 x 8 but above 10x the baseline: re-verified.
  auto fast = make("c3", "t1", {{"speedup", "12"}, {"again", "11.5"}});
  auto r = f.evaluate({fast}).at(0);
  CHECK(r.status == eval_status::passed);
  CHECK_THAT(r.method, Catch::Contains("; re-verified in a fresh process"));
  CHECK(f.ctl[0]->runs() + f.ctl[1]->runs() == 5);
}

TEST_CASE("before any passed result, 3x the baseline is suspicious") {
  fixture f;
  f.start(1);
  CHECK(f.evaluate({make("c1", "t1", {{"speedup", "2.9"}})}).at(0).status
        == eval_status::passed);
  CHECK(f.ctl[0]->runs() == 1);
  fixture fresh;
  fresh.start(1);
  auto r
    = fresh.evaluate({make("c1", "t1", {{"speedup", "3.2"}, {"again", "3.1"}})})
        .at(0);
  CHECK(r.status == eval_status::passed);
  CHECK_THAT(r.method, Catch::Contains("; re-verified in a fresh process"));
  CHECK(fresh.ctl[0]->runs() == 2);
  // A best below the baseline's 1x does not lower the bar: 2.5x is more
  // than 3 x 0.5x, but not more than 3 x 1x.
  fixture slow;
  slow.start(1);
  slow.evaluate({make("c1", "t1", {{"speedup", "0.5"}})});
  slow.evaluate({make("c2", "t1", {{"speedup", "2.5"}})});
  CHECK(slow.ctl[0]->runs() == 2);
}

TEST_CASE("on a GPU a re-run that disagrees by more than 10 % is rejected") {
  fixture f;
  f.start(1, {}, "cuda");
  auto task = cpu_task();
  task.backend = "cuda";
  auto r
    = f.evaluate({make("c1", "t1", {{"speedup", "5"}, {"again", "4.5"}})}, task)
        .at(0);
  CHECK(r.status == eval_status::rejected);
  CHECK(r.detail
        == "not reproduced in a fresh process: first 5.00x, then 4.50x and "
           "4.50x (passed)");
  // Within 10 % it stands, whichever run was the faster.
  auto ok
    = f.evaluate({make("c2", "t1", {{"speedup", "5"}, {"again", "5.4"}})}, task)
        .at(0);
  CHECK(ok.status == eval_status::passed);
  // A re-run far faster confirms the first result too, which claims no
  // more than the kernel reached again.
  auto faster
    = f.evaluate({make("c3", "t1", {{"speedup", "20"}, {"again", "30"}})}, task)
        .at(0);
  CHECK(faster.status == eval_status::passed);
  CHECK(faster.geomean_speedup == 20);
  CHECK_THAT(faster.method,
    Catch::EndsWith("re-verified in a fresh process with seed "
                    + std::to_string(reverify_seed(100)) + ": 30.00x"));
}

TEST_CASE("on a CPU a re-run may disagree by up to 25 %") {
  fixture f;
  f.start(1);
  auto ok = f.evaluate({make("c1", "t1", {{"speedup", "5"}, {"again", "4.1"}})})
              .at(0);
  CHECK(ok.status == eval_status::passed);
  // 16x is above 3 x 5x; 12.5x is 28 % below it.
  auto r
    = f.evaluate({make("c2", "t1", {{"speedup", "16"}, {"again", "12.5"}})})
        .at(0);
  CHECK(r.status == eval_status::rejected);
  CHECK_THAT(r.detail, Catch::StartsWith("not reproduced in a fresh process: "
                                         "first 16.00x, then 12.50x"));
}

TEST_CASE("a speedup that does not reproduce is rejected") {
  fixture f;
  f.start(1);
  auto lucky = make("c1", "t1", {{"speedup", "20"}, {"again", "1.1"}});
  auto r = f.evaluate({lucky}).at(0);
  CHECK(r.status == eval_status::rejected);
  CHECK(r.detail
        == "not reproduced in a fresh process: first 20.00x, then 1.10x and "
           "1.10x (passed)");
  // With one device the re-runs go to the same device, each with a new
  // seed.
  REQUIRE(f.ctl[0]->runs() == 3);
  CHECK(f.ctl[0]->seeds[1] == reverify_seed(f.ctl[0]->seeds[0]));
  CHECK(f.ctl[0]->seeds[1] != f.ctl[0]->seeds[0]);
  CHECK(f.ctl[0]->seeds[2] == reverify_seed(f.ctl[0]->seeds[1]));
}

TEST_CASE("a re-run that disagrees once is decided by another: the first "
          "result stands when that one agrees") {
  // An honest sgemm in kernel processes on the development VM: 13.20x,
  // then 9.83x in a fresh process (34 % apart), which rejected it.
  fixture f;
  f.start(1);
  auto noisy = make(
    "c1", "t1", {{"speedup", "13.2"}, {"again", "9.83"}, {"third", "12.9"}});
  auto r = f.evaluate({noisy}).at(0);
  CHECK(r.status == eval_status::passed);
  CHECK(r.geomean_speedup == 13.2);
  CHECK_THAT(r.method,
    Catch::Contains("; not reproduced in a fresh process (9.83x), then "
                    "re-verified in another with seed "
                    + std::to_string(reverify_seed(reverify_seed(100)))
                    + ": 12.90x"));
  CHECK(f.ctl[0]->runs() == 3);
  // A re-run that agrees at once needs no other.
  auto steady = make("c2", "t1", {{"speedup", "40"}, {"again", "39"}});
  CHECK(f.evaluate({steady}).at(0).status == eval_status::passed);
  CHECK(f.ctl[0]->runs() == 5);
}
