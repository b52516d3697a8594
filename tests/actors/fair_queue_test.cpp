// Specification of the fair-share queue the device pool schedules with.

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "actors/fair_queue.hpp"

using namespace eat;

namespace {

/// Job ids encode their team: 1000 * team + n.
std::string team_of(uint64_t job) {
  return "t" + std::to_string(job / 1000);
}

} // namespace

TEST_CASE("weights 3:1 give a 3:1 dispatch order over a long run") {
  fair_queue q;
  q.set_weight("t1", 3);
  q.set_weight("t2", 1);
  for (uint64_t n = 0; n < 400; ++n) {
    q.push("t1", 1000 + n);
    q.push("t2", 2000 + n);
  }
  std::map<std::string, int> served;
  for (int i = 0; i < 400; ++i) {
    auto job = q.pop();
    REQUIRE(job);
    served[team_of(*job)] += 1;
    // Within any prefix the shares stay within one turn of 3:1.
    auto total = served["t1"] + served["t2"];
    CHECK(std::abs(served["t1"] - 0.75 * total) <= 1.5);
  }
  CHECK(served["t1"] == 300);
  CHECK(served["t2"] == 100);
}

TEST_CASE("equal weights alternate between teams and keep each team FIFO") {
  fair_queue q;
  q.push("t1", 1000);
  q.push("t1", 1001);
  q.push("t2", 2000);
  q.push("t2", 2001);
  CHECK(*q.pop() == 1000);
  CHECK(*q.pop() == 2000);
  CHECK(*q.pop() == 1001);
  CHECK(*q.pop() == 2001);
  CHECK_FALSE(q.pop());
}

TEST_CASE("re-verifications are served before every team") {
  fair_queue q;
  q.push("t1", 1000);
  q.push("t2", 2000);
  q.push_priority(9000);
  q.push_priority(9001);
  CHECK(q.priority_size() == 2);
  CHECK(*q.pop() == 9000);
  CHECK(*q.pop() == 9001);
  CHECK(team_of(*q.pop()) == "t1");
}

TEST_CASE("teams without work are skipped") {
  fair_queue q;
  q.set_weight("t1", 100);
  q.set_weight("idle", 100);
  q.push("t2", 2000);
  q.push("t2", 2001);
  CHECK(*q.pop() == 2000);
  CHECK(*q.pop() == 2001);
  CHECK_FALSE(q.pop());
  CHECK(q.size() == 0);
}

TEST_CASE("an idle team re-enters at the current virtual time") {
  fair_queue q;
  for (uint64_t n = 0; n < 50; ++n)
    q.push("t1", 1000 + n);
  for (int i = 0; i < 50; ++i)
    REQUIRE(q.pop());
  // t2 was idle all along: it gets its share from now on, not 50 turns.
  for (uint64_t n = 0; n < 4; ++n) {
    q.push("t1", 1100 + n);
    q.push("t2", 2000 + n);
  }
  std::map<std::string, int> first_four;
  for (int i = 0; i < 4; ++i)
    first_four[team_of(*q.pop())] += 1;
  CHECK(first_four["t1"] == 2);
  CHECK(first_four["t2"] == 2);
}

TEST_CASE("pop takes only eligible jobs and leaves the others queued") {
  fair_queue q;
  q.push("t1", 1000); // say, a cuda job
  q.push("t1", 1001); // a cpu job
  q.push_priority(9000);
  auto odd = [](uint64_t job) {
    return job % 2 == 1;
  };
  CHECK(*q.pop(odd) == 1001);
  CHECK_FALSE(q.pop(odd));
  CHECK(q.size() == 2);
  CHECK(q.depth() == std::map<std::string, uint64_t>{{"t1", 1}});
}

TEST_CASE("remove takes a job out of any lane") {
  fair_queue q;
  q.push("t1", 1000);
  q.push_priority(9000);
  CHECK(q.remove(9000));
  CHECK(q.remove(1000));
  CHECK_FALSE(q.remove(1000));
  CHECK(q.size() == 0);
}

TEST_CASE("invalid weights count as the smallest weight") {
  fair_queue q;
  q.set_weight("t1", -5);
  CHECK(q.weight("t1") == Approx(1e-6));
  CHECK(q.weight("unknown") == 1.0);
  for (uint64_t n = 0; n < 3; ++n) {
    q.push("t1", 1000 + n);
    q.push("t2", 2000 + n);
  }
  // t1's first turn comes at pass 0, then it waits 1e6 turns of t2.
  CHECK(team_of(*q.pop()) == "t1");
  CHECK(team_of(*q.pop()) == "t2");
  CHECK(team_of(*q.pop()) == "t2");
  CHECK(team_of(*q.pop()) == "t2");
  CHECK(team_of(*q.pop()) == "t1");
}
