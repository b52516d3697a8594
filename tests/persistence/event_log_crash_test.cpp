// Specification of durability: a writer killed with SIGKILL at a random
// moment loses no acknowledged event, leaves no gap, and never leaves part of
// a batch behind.
//
// A forked child appends events (alone, or in batches of three) and writes
// each acknowledged (seq, item) pair to a pipe; the parent kills it after a
// seeded random number of acknowledgements, synchronising on the pipe only.

#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "persistence/event_log.hpp"
#include "persistence/store.hpp"
#include "tests/persistence/child_process.hpp"
#include "tests/persistence/make_event.hpp"
#include "tests/persistence/value_of.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using eat::event;
using eat::persistence::event_log;
using eat::persistence::store;
using eat::test::value_of;

namespace {

constexpr unsigned crash_seed = 20240917;
constexpr int rounds = 20;
constexpr int batch_size = 3;

/// What the child acknowledges for each durable event.
struct ack {
  uint64_t seq;
  uint64_t item;
};

/// The body of item `item` of round `round`, in a group of `size` events
/// starting at item `first`: "round:item:first:size".
std::string body_of(int round, uint64_t item, uint64_t first, int size) {
  return std::to_string(round) + ":" + std::to_string(item) + ":"
         + std::to_string(first) + ":" + std::to_string(size);
}

using eat::test::make_event;

/// The child: appends until killed, acknowledging each event on `out`.
int append_until_killed(const fs::path& dir, int round, int out) {
  auto s = store::open(dir);
  if (!s)
    return 1;
  event_log log{**s};
  uint64_t item = 0;
  for (int step = 0; step < 100'000; ++step) {
    int size = step % 4 == 3 ? batch_size : 1;
    std::vector<event> group;
    for (int j = 0; j < size; ++j)
      group.push_back(make_event(body_of(round, item + j, item, size),
        eat::event_kind::evaluation_finished));
    auto seqs = log.append_batch(std::move(group));
    if (!seqs)
      return 2;
    for (auto seq : *seqs) {
      ack a{seq, item++};
      if (write(out, &a, sizeof a) != static_cast<ssize_t>(sizeof a))
        return 3;
    }
  }
  return 0;
}

struct parsed_body {
  int round = -1;
  uint64_t item = 0;
  uint64_t first = 0;
  int size = 0;
};

parsed_body parse(const std::string& body) {
  parsed_body p;
  unsigned long long item = 0;
  unsigned long long first = 0;
  if (std::sscanf(
        body.c_str(), "%d:%llu:%llu:%d", &p.round, &item, &first, &p.size)
      != 4)
    FAIL("unexpected body " << body);
  p.item = item;
  p.first = first;
  return p;
}

/// Checks that every group of events in `log` is complete and contiguous.
void check_groups_complete(const std::vector<event>& log) {
  for (size_t i = 0; i < log.size();) {
    auto head = parse(log[i].body);
    INFO("group starting at seq " << log[i].seq << ": " << log[i].body);
    REQUIRE(head.item == head.first);
    REQUIRE(i + head.size <= log.size());
    for (int j = 1; j < head.size; ++j) {
      auto member = parse(log[i + j].body);
      CHECK(member.round == head.round);
      CHECK(member.first == head.first);
      CHECK(member.item == head.first + j);
    }
    i += head.size;
  }
}

} // namespace

TEST_CASE("a writer killed by SIGKILL loses no acknowledged event") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  std::mt19937 rng{crash_seed};
  std::uniform_int_distribution<int> acks_before_kill{1, 40};
  std::map<uint64_t, std::string> acked; // seq -> expected body prefix
  for (int round = 0; round < rounds; ++round) {
    auto wanted = acks_before_kill(rng);
    INFO("round " << round << ", kill after " << wanted << " acks (seed "
                  << crash_seed << ")");
    eat::test::child_process writer{[&](int out) {
      return append_until_killed(dir, round, out);
    }};
    ack a{};
    for (int i = 0; i < wanted; ++i) {
      REQUIRE(writer.read_exact(&a, sizeof a));
      acked[a.seq] = std::to_string(round) + ":" + std::to_string(a.item) + ":";
    }
    auto status = writer.kill_and_reap();
    REQUIRE(WIFSIGNALED(status));
    while (writer.read_exact(&a, sizeof a)) // acks sent before it died
      acked[a.seq] = std::to_string(round) + ":" + std::to_string(a.item) + ":";
    auto s = store::open(dir);
    REQUIRE(s);
    auto log = value_of(event_log{**s}.read(1));
    for (size_t i = 0; i < log.size(); ++i)
      REQUIRE(log[i].seq == i + 1);
    REQUIRE(log.size() >= acked.rbegin()->first);
    for (auto& [seq, prefix] : acked)
      CHECK_THAT(log[seq - 1].body, Catch::StartsWith(prefix));
    check_groups_complete(log);
  }
}
