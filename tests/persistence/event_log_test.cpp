// Specification of the event log: gap-free sequence numbers from 1, stamped
// times, batches in one transaction, reads by range, and corrupt records
// reported by their seq.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/event_log.hpp"
#include "persistence/keys.hpp"
#include "persistence/store.hpp"
#include "tests/persistence/make_event.hpp"
#include "tests/persistence/raw_lmdb.hpp"
#include "tests/persistence/value_of.hpp"
#include "tests/support/temp_dir.hpp"

using eat::event;
using eat::event_kind;
using eat::persistence::event_log;
using eat::persistence::store;
using eat::persistence::store_options;
using eat::test::value_of;

namespace {

constexpr int64_t fixed_now = 1'700'000'000'123;

int64_t fixed_clock() {
  return fixed_now;
}

using eat::test::make_event;

std::vector<std::string> bodies(const std::vector<event>& events) {
  std::vector<std::string> out;
  for (auto& e : events)
    out.push_back(e.body);
  return out;
}

/// An open store with a log of `n` events with bodies "e1".."en".
struct filled_log {
  eat::test::temp_dir tmp;
  std::unique_ptr<store> db;
  std::unique_ptr<event_log> log;

  explicit filled_log(int n) {
    db = value_of(store::open(tmp.path() / "store"));
    log = std::make_unique<event_log>(*db, fixed_clock);
    for (int i = 1; i <= n; ++i)
      REQUIRE(log->append(make_event("e" + std::to_string(i))) == uint64_t(i));
  }
};

} // namespace

TEST_CASE("an appended event reads back unchanged") {
  filled_log f{0};
  auto body = eat::wire::encode(eat::run_resumed{7, 2});
  auto e = make_event(body, event_kind::run_resumed);
  e.unix_ms = 42;
  REQUIRE(f.log->append(e) == uint64_t{1});
  auto read = f.log->read(1);
  REQUIRE(read);
  REQUIRE(read->size() == 1);
  auto& got = read->front();
  CHECK(got.seq == 1);
  CHECK(got.unix_ms == 42);
  CHECK(got.kind == event_kind::run_resumed);
  CHECK(got.body == body);
  CHECK(eat::wire::decode<eat::run_resumed>(got.body)->last_seq == 7);
}

TEST_CASE("sequence numbers are gap-free from 1, whatever seq is passed in") {
  filled_log f{0};
  CHECK(value_of(f.log->last_seq()) == 0);
  for (uint64_t i = 1; i <= 10; ++i) {
    auto e = make_event("x");
    e.seq = 1000 + i; // ignored: the log numbers events
    REQUIRE(f.log->append(e) == i);
    CHECK(value_of(f.log->last_seq()) == i);
  }
  auto all = f.log->read(0);
  REQUIRE(all);
  REQUIRE(all->size() == 10);
  for (size_t i = 0; i < all->size(); ++i)
    CHECK((*all)[i].seq == i + 1);
}

TEST_CASE("append stamps the clock's time only when unix_ms is 0") {
  filled_log f{1};
  auto stamped = make_event("given");
  stamped.unix_ms = 5;
  REQUIRE(f.log->append(stamped));
  auto all = value_of(f.log->read(1));
  CHECK(all[0].unix_ms == fixed_now);
  CHECK(all[1].unix_ms == 5);
}

TEST_CASE("the system clock stamps the current time") {
  eat::test::temp_dir tmp;
  auto s = store::open(tmp.path() / "store");
  REQUIRE(s);
  event_log log{**s};
  auto before = eat::persistence::system_clock_ms();
  REQUIRE(log.append(make_event("now")));
  auto after = eat::persistence::system_clock_ms();
  auto e = value_of(log.read(1)).at(0);
  CHECK(e.unix_ms >= before);
  CHECK(e.unix_ms <= after);
}

TEST_CASE("the log survives reopening and continues its numbering") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  {
    auto s = store::open(dir);
    REQUIRE(s);
    event_log log{**s};
    for (int i = 1; i <= 5; ++i)
      REQUIRE(log.append(make_event("e" + std::to_string(i))));
  }
  auto s = store::open(dir);
  REQUIRE(s);
  event_log log{**s};
  CHECK(value_of(log.last_seq()) == 5);
  CHECK(log.append(make_event("e6")) == uint64_t{6});
  CHECK(bodies(value_of(log.read(1)))
        == std::vector<std::string>{"e1", "e2", "e3", "e4", "e5", "e6"});
}

TEST_CASE("a batch gets consecutive seqs after the last event") {
  filled_log f{2};
  std::vector<event> batch{
    make_event("b1"), make_event("b2"), make_event("b3")};
  auto seqs = f.log->append_batch(batch);
  REQUIRE(seqs);
  CHECK(*seqs == std::vector<uint64_t>{3, 4, 5});
  CHECK(bodies(value_of(f.log->read(3)))
        == std::vector<std::string>{"b1", "b2", "b3"});
}

TEST_CASE("an empty batch appends nothing") {
  filled_log f{2};
  auto seqs = f.log->append_batch({});
  REQUIRE(seqs);
  CHECK(seqs->empty());
  CHECK(value_of(f.log->last_seq()) == 2);
}

TEST_CASE("a batch that fails leaves no event of it behind") {
  // The batch needs more than the map may grow to: its transaction fails.
  eat::test::temp_dir tmp;
  auto s = store::open(tmp.path() / "store",
    store_options{.map_size = 64 << 10, .max_map_size = 64 << 10});
  REQUIRE(s);
  event_log log{**s};
  REQUIRE(log.append(make_event("before")) == uint64_t{1});
  std::vector<event> batch;
  for (int i = 0; i < 40; ++i)
    batch.push_back(make_event(std::string(2000, 'b')));
  REQUIRE_FALSE(log.append_batch(batch));
  CHECK(bodies(value_of(log.read(1))) == std::vector<std::string>{"before"});
  CHECK(log.append(make_event("after")) == uint64_t{2});
}

TEST_CASE("read starts at any seq and returns at most max events") {
  filled_log f{10};
  CHECK(bodies(value_of(f.log->read(4, 3)))
        == std::vector<std::string>{"e4", "e5", "e6"});
  CHECK(
    bodies(value_of(f.log->read(9))) == std::vector<std::string>{"e9", "e10"});
  CHECK(value_of(f.log->read(0)).size() == 10);
  CHECK(value_of(f.log->read(1, 1)).front().body == "e1");
  CHECK(value_of(f.log->read(11)).empty());
  CHECK(value_of(f.log->read(1, 0)).empty());
}

TEST_CASE("a record that does not decode is a store failure naming its seq") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  {
    auto s = store::open(dir);
    REQUIRE(s);
    event_log log{**s};
    for (int i = 1; i <= 3; ++i)
      REQUIRE(log.append(make_event("e" + std::to_string(i))));
  }
  using eat::persistence::encode_seq_key;
  std::string expected_text;
  SECTION("bytes that are not MessagePack") {
    eat::test::raw_put(dir, "events", encode_seq_key(2), "\xc1 garbage");
    expected_text
      = "event at seq 2 in store at " + dir.string() + " cannot be decoded";
  }
  SECTION("an event recorded under another seq") {
    auto e = make_event("moved");
    e.seq = 9;
    eat::test::raw_put(dir, "events", encode_seq_key(2), eat::wire::encode(e));
    expected_text
      = "event at seq 2 in store at " + dir.string() + " records seq 9";
  }
  auto s = store::open(dir);
  REQUIRE(s);
  event_log log{**s};
  auto all = log.read(1);
  REQUIRE_FALSE(all);
  CHECK(eat::code_of(all.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(all.error()), Catch::Contains(expected_text));
  CHECK(bodies(value_of(log.read(3))) == std::vector<std::string>{"e3"});
}

TEST_CASE("sequence keys are big-endian so byte order is numeric order") {
  using eat::persistence::decode_seq_key;
  using eat::persistence::encode_seq_key;
  CHECK(
    encode_seq_key(0x0102030405060708) == "\x01\x02\x03\x04\x05\x06\x07\x08");
  CHECK(encode_seq_key(255) < encode_seq_key(256));
  CHECK(decode_seq_key(encode_seq_key(UINT64_MAX)) == UINT64_MAX);
  CHECK_FALSE(decode_seq_key("short"));
}
