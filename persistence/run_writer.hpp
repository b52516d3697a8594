// The single writer of a run's store. It keeps the run's history in memory
// (rebuilt from the log when opened) and commits each batch of events
// together with its files and the view records they change, in one LMDB
// transaction: after a crash the log, the files and the views agree.
//
// An event that does not fit the history (persistence/run_history.hpp) is
// refused and nothing of its batch is written. A lesson (learning_added)
// also rewrites /learning.md, rendered from all lessons.
//
// Ownership: one per process and run (the run directory's lock ensures one
// process); in a running eat the store actor owns it. Not thread-safe.

#pragma once

#include <memory>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/event.hpp"
#include "actors/protocol/file_write.hpp"
#include "persistence/event_log.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/run_history.hpp"
#include "persistence/store.hpp"

namespace eat::persistence {

class run_writer {
public:
  /// Opens the writer of `s` (which must outlive it) and rebuilds the
  /// history from the log; fails when the log does not fit together.
  /// View records that differ from a rebuild of the log (written by an
  /// older eat, before a field was added) are rewritten.
  static caf::expected<std::unique_ptr<run_writer>> open(store& s);

  /// Appends `events` (seq and, when 0, time set here) and writes `files`,
  /// all or nothing. Returns the events' seqs.
  caf::expected<std::vector<uint64_t>> commit(std::vector<event> events,
                                              std::vector<file_write> files);

  /// The history after the last commit.
  const run_history& history() const {
    return history_;
  }

private:
  run_writer(store& s, run_history h);

  /// Restores the history from the log after a refused or failed commit.
  void reload();

  store& store_;
  event_log log_;
  file_tree files_;
  run_history history_;
};

} // namespace eat::persistence
