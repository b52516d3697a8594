// A transaction on a store's LMDB environment, and cursors within it.
//
// Only store::view and store::update make transactions: they hand one to a
// function and end it when the function returns. The thread that runs that
// function owns the transaction. Never share a txn between threads, and never
// keep a txn, a cursor or a string_view it returned past that function: the
// views point into LMDB's memory map, which is gone (or remapped) afterwards.
//
// A cursor must be destroyed before its transaction ends (LMDB frees the
// cursors of a write transaction at commit); keeping it a local of the
// function passed to view/update guarantees that.
//
// Every LMDB return code is checked; failures are error::store_failure naming
// the operation (see lmdb_error.hpp). A txn remembers whether an operation
// failed with MDB_MAP_FULL, which store::update answers by growing the map and
// running the whole transaction again.

#pragma once

#include <cstddef>
#include <optional>
#include <shared_mutex>
#include <string_view>
#include <utility>

#include <caf/expected.hpp>
#include <lmdb.h>

namespace eat::persistence {

class cursor;

/// A read-only or read-write LMDB transaction; aborted unless committed.
class txn {
public:
  txn(txn&& other) noexcept;
  txn(const txn&) = delete;
  txn& operator=(const txn&) = delete;
  txn& operator=(txn&&) = delete;
  ~txn();

  /// Opens the database `name`, creating it when `create` (write transactions
  /// only); nullopt when it does not exist.
  caf::expected<std::optional<MDB_dbi>> open_db(const char* name, bool create);

  /// Returns the number of entries in `db`.
  caf::expected<size_t> entries(MDB_dbi db);

  /// Returns the value under `key`, or nullopt; valid until the txn ends.
  caf::expected<std::optional<std::string_view>> get(
    MDB_dbi db, std::string_view key);

  /// Stores `value` under `key`; `flags` as for mdb_put (e.g. MDB_APPEND).
  caf::expected<void> put(MDB_dbi db, std::string_view key,
    std::string_view value, unsigned flags = 0);

  /// Opens a cursor on `db`; destroy it before the transaction ends.
  caf::expected<cursor> open_cursor(MDB_dbi db);

  /// Commits; the transaction is over whether or not this succeeds.
  caf::expected<void> commit();

  /// True when an operation of this transaction failed with MDB_MAP_FULL.
  bool map_full() const noexcept {
    return map_full_;
  }

  /// The store directory, for error messages.
  std::string_view dir() const noexcept {
    return dir_;
  }

private:
  friend class store;

  txn(MDB_txn* handle, std::shared_lock<std::shared_mutex> lock,
    std::string_view dir);

  caf::error fail(std::string_view op, int rc);

  MDB_txn* handle_;
  std::shared_lock<std::shared_mutex> lock_;
  std::string_view dir_;
  bool map_full_ = false;
};

/// A position in one database of a transaction.
class cursor {
public:
  /// A key and its value; valid until the transaction ends.
  using entry = std::pair<std::string_view, std::string_view>;

  cursor(cursor&& other) noexcept;
  cursor(const cursor&) = delete;
  cursor& operator=(const cursor&) = delete;
  cursor& operator=(cursor&&) = delete;
  ~cursor();

  /// Moves to the first entry whose key is >= `key`; nullopt past the end.
  caf::expected<std::optional<entry>> seek(std::string_view key);

  /// Moves to the next entry; nullopt past the end.
  caf::expected<std::optional<entry>> next();

  /// Moves to the first entry; nullopt when the database is empty.
  caf::expected<std::optional<entry>> first();

  /// Moves to the last entry; nullopt when the database is empty.
  caf::expected<std::optional<entry>> last();

private:
  friend class txn;

  cursor(MDB_cursor* handle, std::string_view dir);

  caf::expected<std::optional<entry>> move(
    MDB_cursor_op op, std::string_view key, std::string_view what);

  MDB_cursor* handle_;
  std::string_view dir_;
};

} // namespace eat::persistence
