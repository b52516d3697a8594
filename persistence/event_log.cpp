#include "persistence/event_log.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/keys.hpp"

namespace eat::persistence {

namespace {

caf::error bad_key(const txn& t, std::string_view key) {
  return make_error(error::store_failure,
    "event log in store at " + std::string{t.dir()} + " has a key of "
      + std::to_string(key.size()) + " bytes, expected "
      + std::to_string(seq_key_size));
}

/// Returns the highest seq in `t`, 0 when the log is empty.
caf::expected<uint64_t> last_seq_in(txn& t, MDB_dbi events) {
  auto c = t.open_cursor(events);
  if (!c)
    return c.error();
  auto last = c->last();
  if (!last)
    return last.error();
  if (!*last)
    return uint64_t{0};
  auto seq = decode_seq_key((*last)->first);
  if (!seq)
    return bad_key(t, (*last)->first);
  return *seq;
}

/// Decodes one record, checking that it is the event its key says.
caf::expected<event> decode_record(const txn& t, const cursor::entry& rec) {
  auto seq = decode_seq_key(rec.first);
  if (!seq)
    return bad_key(t, rec.first);
  auto where = [&] {
    return "event at seq " + std::to_string(*seq) + " in store at "
           + std::string{t.dir()};
  };
  auto e = wire::decode<event>(rec.second);
  if (!e)
    return make_error(error::store_failure,
      where() + " cannot be decoded (" + render(e.error()) + ")");
  if (e->seq != *seq)
    return make_error(
      error::store_failure, where() + " records seq " + std::to_string(e->seq));
  return e;
}

} // namespace

int64_t system_clock_ms() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
}

event_log::event_log(store& s, clock_fn clock)
  : store_(s), clock_(std::move(clock)) {
  // nop
}

caf::expected<uint64_t> event_log::append(event e) {
  std::vector<event> one;
  one.push_back(std::move(e));
  auto seqs = append_batch(std::move(one));
  if (!seqs)
    return seqs.error();
  return seqs->front();
}

caf::expected<std::vector<uint64_t>> event_log::append_batch(
  std::vector<event> events) {
  using result_type = caf::expected<std::vector<uint64_t>>;
  if (events.empty())
    return std::vector<uint64_t>{};
  return store_.update([&](txn& t) -> result_type {
    // The transaction may run again after the map grows: start afresh. The
    // log numbers these events itself, whatever seq they carry.
    auto copy = events;
    for (auto& e : copy)
      e.seq = 0;
    return append_in(t, copy);
  });
}

caf::expected<std::vector<uint64_t>> event_log::append_in(
  txn& t, std::vector<event>& events) {
  auto now = clock_();
  auto events_db = store_.handle(db::events);
  auto last = last_seq_in(t, events_db);
  if (!last)
    return last.error();
  std::vector<uint64_t> seqs;
  seqs.reserve(events.size());
  for (auto& e : events) {
    if (e.unix_ms == 0)
      e.unix_ms = now;
    auto next = *last + seqs.size() + 1;
    if (e.seq != 0 && e.seq != next)
      return make_error(error::store_failure,
                        "event numbered " + std::to_string(e.seq)
                          + " cannot be appended as " + std::to_string(next)
                          + " in store at " + std::string{t.dir()});
    e.seq = next;
    auto put
      = t.put(events_db, encode_seq_key(e.seq), wire::encode(e), MDB_APPEND);
    if (!put)
      return put.error();
    seqs.push_back(e.seq);
  }
  return seqs;
}

caf::expected<std::vector<event>> event_log::read(
  uint64_t from, size_t max) const {
  using result_type = caf::expected<std::vector<event>>;
  auto events_db = store_.handle(db::events);
  return store_.view([&](txn& t) -> result_type {
    std::vector<event> result;
    if (max == 0)
      return result;
    auto c = t.open_cursor(events_db);
    if (!c)
      return c.error();
    for (auto rec = c->seek(encode_seq_key(from));; rec = c->next()) {
      if (!rec)
        return rec.error();
      if (!*rec)
        break;
      auto e = decode_record(t, **rec);
      if (!e)
        return e.error();
      result.push_back(std::move(*e));
      if (result.size() == max)
        break;
    }
    return result;
  });
}

caf::expected<uint64_t> event_log::last_seq() const {
  auto events_db = store_.handle(db::events);
  return store_.view([&](txn& t) {
    return last_seq_in(t, events_db);
  });
}

} // namespace eat::persistence
