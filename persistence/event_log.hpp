// The event log: the append-only evolution history of a run, kept in the
// store's "events" database (docs/store-layout.md). Sequence numbers are
// gap-free, starting at 1, and assigned inside the write transaction, so they
// stay gap-free with several writer threads or processes.
//
// Ownership: a thin view on a store, which must outlive it; make as many as
// needed. In a running eat process the store actor appends; anyone reads.
//
// Thread safety: as the store's. Reads may run on any thread; appends may be
// called from any thread and are serialised by the store.
//
// Durability: the store keeps LMDB's default synchronous commits, so an
// appended event is on disk when append returns; a crash (even SIGKILL or a
// power loss on a disk that honours fsync) keeps every acknowledged event and
// loses only the transaction in flight, which then never happened.

#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/event.hpp"
#include "persistence/store.hpp"

namespace eat::persistence {

/// Returns wall-clock milliseconds since the Unix epoch.
int64_t system_clock_ms();

/// The append-only evolution history: gap-free sequence numbers from 1.
class event_log {
public:
  /// Source of event times, in milliseconds since the Unix epoch.
  using clock_fn = std::function<int64_t()>;

  /// A log in `s`, stamping events with `clock`.
  explicit event_log(store& s, clock_fn clock = system_clock_ms);

  /// Sets e.seq (last + 1) and e.unix_ms (the clock's now, when 0), commits
  /// and returns the seq. The event is durable when this returns.
  caf::expected<uint64_t> append(event e);

  /// Appends all `events` in one transaction (all or nothing); returns their
  /// seqs, which are consecutive.
  caf::expected<std::vector<uint64_t>> append_batch(std::vector<event> events);

  /// Appends `events` inside the write transaction `t` (which the caller
  /// commits), setting their seq and, when 0, unix_ms. An event whose seq is
  /// already set must be the next one, else nothing more is appended and an
  /// error returns. Lets one transaction append events and write files and
  /// views together.
  caf::expected<std::vector<uint64_t>> append_in(txn& t,
                                                 std::vector<event>& events);

  /// Returns the events with seq >= from, oldest first, at most `max` of them.
  /// Holds one read transaction: page through long logs with `max`.
  caf::expected<std::vector<event>> read(
    uint64_t from, size_t max = SIZE_MAX) const;

  /// Returns the highest seq, 0 when the log is empty.
  caf::expected<uint64_t> last_seq() const;

private:
  store& store_;
  clock_fn clock_;
};

} // namespace eat::persistence
