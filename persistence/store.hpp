// The store: one LMDB environment in a run's store directory, holding the
// named databases listed in `db` (docs/store-layout.md describes them).
//
// Ownership: a process opens a store directory once (LMDB forbids opening the
// same environment twice in one process) and shares the `store` object; in a
// running eat process the store actor owns it and performs every write.
// Several processes may open the same directory (e.g. `eat fs` while a run is
// going); LMDB serialises their writers.
//
// Thread safety:
// - Reads (`view`, `get_meta`) may run on any thread, concurrently with each
//   other and with a write. The environment is opened with MDB_NOTLS, so a
//   read transaction is not bound to a thread-local reader slot.
// - Writes (`update`, `put_meta`) may be called from any thread: a mutex
//   serialises them, so one write transaction is active at a time. Writes
//   from a single thread (the store actor) are still the intended use.
// - Do not call view/update from inside the function given to view/update.
//
// LMDB rules, each with how this class follows it:
// - Set the map size and the number of named databases before opening:
//   store_options::map_size; room for max_named_dbs named databases.
// - The map can only be resized while no transaction is active in the
//   process: every transaction holds a shared lock on the map, and growth
//   takes it exclusively.
// - MDB_MAP_FULL aborts the whole transaction: update() doubles the map and
//   runs the transaction again, up to store_options::max_map_size.
// - Another process may grow the map (MDB_MAP_RESIZED): transactions adopt
//   the new size and begin again.
// - A process killed inside a read transaction leaves a stale reader slot
//   that pins old pages: open() and check_readers() clear such slots.
// - Never use a store across fork(): the child opens its own.
// - LMDB does not checksum pages; a store corrupted in place (rather than
//   truncated) can crash the process. Keep the store on a local disk.

#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>

#include <caf/expected.hpp>
#include <lmdb.h>

#include "persistence/environment.hpp"
#include "persistence/txn.hpp"

namespace eat::persistence {

/// The schema version this eat writes and reads.
constexpr uint64_t schema_version = 1;

/// The meta key holding the schema version (reserved: put_meta refuses it).
constexpr std::string_view schema_version_key = "schema_version";

/// The named databases of a store. "meta" comes first: its schema_version
/// marks an environment as an eat store.
enum class db : uint8_t {
  /// String keys to bytes: the schema version and other run metadata.
  meta,
  /// Big-endian uint64 sequence numbers to MessagePack eat::event records.
  events,
  /// Content-addressed blobs: SHA-256 (32 raw bytes) to the bytes.
  blobs,
  /// Versioned file namespace: path + NUL + big-endian version to a
  /// MessagePack file record (persistence/file_tree.hpp).
  files,
  /// Materialised views of the run's state, kept in step with the log
  /// (persistence/views.hpp).
  views,
};

/// Number of enumerators of `db`.
constexpr size_t db_count = 5;
static_assert(static_cast<size_t>(db::views) + 1 == db_count,
  "db_count must count every enumerator of db");

/// Returns the database's name in the environment, e.g. "events".
const char* db_name(db x);

/// Settings for opening a store.
struct store_options {
  /// Initial map size in bytes; the file is sparse, so generous is cheap.
  uint64_t map_size = 64ull << 30;
  /// The map never grows beyond this size (bytes).
  uint64_t max_map_size = 1ull << 40;
  /// Opens without write access; fails when the store does not exist.
  bool read_only = false;
};

/// One LMDB environment with the named databases of `db`.
class store {
public:
  /// Opens (creating when missing, unless read_only) the store in `dir`,
  /// clears stale reader slots and checks the schema version.
  static caf::expected<std::unique_ptr<store>> open(
    const std::filesystem::path& dir, store_options opts = {});

  store(const store&) = delete;
  store& operator=(const store&) = delete;
  ~store();

  /// Stores `value` under `key` in "meta" in its own transaction.
  caf::expected<void> put_meta(std::string_view key, std::string_view value);

  /// Returns the value under `key` in "meta", or nullopt.
  caf::expected<std::optional<std::string>> get_meta(
    std::string_view key) const;

  /// Clears stale reader slots left by killed processes (mdb_reader_check);
  /// returns how many it cleared.
  caf::expected<int> check_readers();

  /// Runs `fn(txn&)`, which returns a caf::expected, in a read transaction.
  template<class F>
  auto view(F&& fn) const -> std::invoke_result_t<F&, txn&> {
    using result_type = std::invoke_result_t<F&, txn&>;
    auto t = begin(MDB_RDONLY);
    if (!t)
      return result_type{t.error()};
    return fn(*t);
  }

  /// Runs `fn(txn&)`, which returns a caf::expected, in a write transaction
  /// and commits when it succeeds. All or nothing: on any error nothing of
  /// it is kept. `fn` may run more than once (after the map grew), so it must
  /// compute everything it writes from the transaction and its captures.
  template<class F>
  auto update(F&& fn) -> std::invoke_result_t<F&, txn&> {
    using result_type = std::invoke_result_t<F&, txn&>;
    std::optional<result_type> result;
    auto done = run_update([&](txn& t) -> caf::expected<void> {
      result.emplace(fn(t));
      if (!*result)
        return result->error();
      return caf::unit;
    });
    if (!done)
      return result_type{done.error()};
    return std::move(*result);
  }

  /// Returns the handle of database `x`, valid for the store's lifetime.
  MDB_dbi handle(db x) const noexcept {
    return dbs_[static_cast<size_t>(x)];
  }

  /// The store directory.
  const std::string& dir() const noexcept {
    return dir_;
  }

  /// The current size of the memory map in bytes.
  uint64_t map_size() const;

  /// True when opened read-only.
  bool read_only() const noexcept {
    return opts_.read_only;
  }

private:
  using update_fn = std::function<caf::expected<void>(txn&)>;

  store(env_ptr env, std::string dir, store_options opts);

  caf::expected<txn> begin(unsigned flags) const;
  caf::expected<void> run_update(const update_fn& fn);
  caf::expected<void> grow();
  caf::expected<void> adopt_map_size() const;
  caf::expected<void> open_databases();
  caf::expected<void> open_databases_in(txn& t);
  caf::expected<void> create_schema(txn& t);
  caf::expected<void> check_schema(txn& t);

  env_ptr env_;
  std::string dir_;
  store_options opts_;
  std::array<MDB_dbi, db_count> dbs_{};
  /// Shared by every transaction; exclusive while the map is resized.
  mutable std::shared_mutex map_mutex_;
  /// Serialises write transactions.
  std::mutex write_mutex_;
};

} // namespace eat::persistence
