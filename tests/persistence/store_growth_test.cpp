// Specification of map growth: a store opened with a small map grows it when
// a transaction does not fit, up to store_options::max_map_size, and follows
// a map grown by another process.

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include "actors/protocol/error.hpp"
#include "persistence/event_log.hpp"
#include "persistence/store.hpp"
#include "tests/persistence/child_process.hpp"
#include "tests/persistence/make_event.hpp"
#include "tests/persistence/value_of.hpp"
#include "tests/support/temp_dir.hpp"

using eat::event;
using eat::persistence::event_log;
using eat::persistence::store;
using eat::persistence::store_options;
using eat::test::value_of;

namespace {

constexpr uint64_t tiny_map = 64 << 10;

using eat::test::make_event;

std::vector<event> make_batch(size_t n, size_t body_size) {
  std::vector<event> batch;
  for (size_t i = 0; i < n; ++i)
    batch.push_back(
      make_event(std::string(body_size, static_cast<char>('a' + i % 26))));
  return batch;
}

/// True when `events` are numbered 1, 2, 3, ... without gaps.
bool gap_free(const std::vector<event>& events) {
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].seq != i + 1)
      return false;
  return true;
}

} // namespace

TEST_CASE("a full map grows and the appends succeed") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  {
    auto s = store::open(dir, store_options{.map_size = tiny_map});
    REQUIRE(s);
    event_log log{**s};
    for (int i = 0; i < 200; ++i)
      REQUIRE(log.append(make_event(std::string(1000, 'x') + std::to_string(i)))
              == uint64_t(i + 1));
    CHECK((*s)->map_size() > tiny_map);
  }
  auto s = store::open(dir, store_options{.map_size = tiny_map});
  REQUIRE(s);
  event_log log{**s};
  REQUIRE(log.append(make_event("after reopening")) == uint64_t{201});
  auto all = log.read(1);
  REQUIRE(all);
  REQUIRE(all->size() == 201);
  CHECK(gap_free(*all));
  CHECK((*all)[150].body == std::string(1000, 'x') + "150");
}

TEST_CASE("reopening keeps a grown map and raises a smaller one") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  uint64_t grown = 0;
  {
    auto s = store::open(dir, store_options{.map_size = tiny_map});
    REQUIRE(s);
    REQUIRE(event_log{**s}.append_batch(make_batch(40, 4096)));
    grown = (*s)->map_size();
    REQUIRE(grown > tiny_map);
  }
  {
    auto s = store::open(dir, store_options{.map_size = tiny_map});
    REQUIRE(s);
    CHECK((*s)->map_size() == grown);
  }
  auto s = store::open(dir, store_options{.map_size = 4 * grown});
  REQUIRE(s);
  CHECK((*s)->map_size() == 4 * grown);
}

TEST_CASE("a transaction that needs several doublings commits whole") {
  eat::test::temp_dir tmp;
  auto s
    = store::open(tmp.path() / "store", store_options{.map_size = tiny_map});
  REQUIRE(s);
  event_log log{**s};
  auto seqs = log.append_batch(make_batch(100, 4096));
  REQUIRE(seqs);
  REQUIRE(seqs->size() == 100);
  CHECK(seqs->back() == 100);
  CHECK((*s)->map_size() >= 8 * tiny_map);
  CHECK(value_of(log.read(1)).size() == 100);
}

TEST_CASE("a transaction that cannot fit under max_map_size commits nothing") {
  eat::test::temp_dir tmp;
  auto s = store::open(tmp.path() / "store",
    store_options{.map_size = tiny_map, .max_map_size = 2 * tiny_map});
  REQUIRE(s);
  event_log log{**s};
  REQUIRE(log.append(make_event("small")) == uint64_t{1});
  auto seqs = log.append_batch(make_batch(64, 4096));
  REQUIRE_FALSE(seqs);
  CHECK(eat::code_of(seqs.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(seqs.error()),
    Catch::Contains((*s)->dir()) && Catch::Contains("full"));
  CHECK((*s)->map_size() == 2 * tiny_map);
  CHECK(value_of(log.last_seq()) == 1);
  CHECK(value_of(log.read(1)).size() == 1);
  CHECK(log.append(make_event("still usable")) == uint64_t{2});
}

TEST_CASE("a store follows a map grown by another process") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  auto s = store::open(dir, store_options{.map_size = tiny_map});
  REQUIRE(s);
  event_log log{**s};
  REQUIRE(log.append(make_event("parent")) == uint64_t{1});
  eat::test::child_process writer{[&](int) {
    auto own = store::open(dir, store_options{.map_size = tiny_map});
    if (!own)
      return 1;
    event_log child_log{**own};
    return child_log.append_batch(make_batch(100, 4096)) ? 0 : 2;
  }};
  auto status = writer.reap();
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  auto all = log.read(1);
  REQUIRE(all);
  CHECK(all->size() == 101);
  CHECK(log.append(make_event("parent again")) == uint64_t{102});
  CHECK((*s)->map_size() > tiny_map);
}

TEST_CASE("appends from several threads stay gap-free while readers read") {
  // A tiny map makes the map grow while the reader holds transactions.
  eat::test::temp_dir tmp;
  auto s
    = store::open(tmp.path() / "store", store_options{.map_size = tiny_map});
  REQUIRE(s);
  event_log log{**s};
  constexpr int writers = 4;
  constexpr int per_writer = 40;
  std::atomic<int> failures{0};
  std::atomic<bool> writing{true};
  std::thread reader{[&] {
    while (writing.load()) {
      auto snapshot = log.read(1);
      if (!snapshot || !gap_free(*snapshot))
        ++failures;
    }
  }};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      for (int i = 0; i < per_writer; ++i)
        if (!log.append(make_event(std::to_string(w) + ":" + std::to_string(i)
                                   + std::string(500, '.'))))
          ++failures;
    });
  for (auto& t : threads)
    t.join();
  writing = false;
  reader.join();
  CHECK(failures.load() == 0);
  auto all = log.read(1);
  REQUIRE(all);
  REQUIRE(all->size() == size_t{writers * per_writer});
  CHECK(gap_free(*all));
  std::vector<int> next(writers, 0);
  for (auto& e : *all) {
    auto w = e.body[0] - '0';
    CHECK(e.body.substr(0, e.body.find('.'))
          == std::to_string(w) + ":" + std::to_string(next[w]++));
  }
  CHECK((*s)->map_size() > tiny_map);
}
