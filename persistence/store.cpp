#include "persistence/store.hpp"

#include <string>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/lmdb_error.hpp"

namespace eat::persistence {

namespace fs = std::filesystem;

namespace {

/// How often a transaction begins again after another process grew the map.
constexpr int max_resize_attempts = 3;

} // namespace

const char* db_name(db x) {
  switch (x) {
    case db::meta: return "meta";
    case db::events: return "events";
    case db::blobs: return "blobs";
    case db::files: return "files";
    case db::views: return "views";
  }
  return "unknown";
}

// -- opening ------------------------------------------------------------------

caf::expected<std::unique_ptr<store>> store::open(
  const fs::path& dir, store_options opts) {
  auto env = open_environment(dir, opts.map_size, opts.read_only);
  if (!env)
    return env.error();
  std::unique_ptr<store> result{new store(std::move(*env), dir.string(), opts)};
  if (auto cleared = result->check_readers(); !cleared)
    return cleared.error();
  if (auto ok = result->open_databases(); !ok)
    return ok.error();
  return result;
}

store::store(env_ptr env, std::string dir, store_options opts)
  : env_(std::move(env)), dir_(std::move(dir)), opts_(opts) {
  // nop
}

store::~store() = default;

caf::expected<void> store::open_databases() {
  auto init = [this](txn& t) {
    return open_databases_in(t);
  };
  if (!opts_.read_only)
    return update(init);
  auto t = begin(MDB_RDONLY);
  if (!t)
    return t.error();
  if (auto ok = init(*t); !ok)
    return ok;
  return t->commit(); // Keeps the handles open after the transaction.
}

caf::expected<void> store::open_databases_in(txn& t) {
  auto meta = t.open_db(db_name(db::meta), false);
  if (!meta)
    return meta.error();
  if (!*meta)
    return create_schema(t);
  dbs_[static_cast<size_t>(db::meta)] = **meta;
  if (auto ok = check_schema(t); !ok)
    return ok;
  for (size_t i = 1; i < db_count; ++i) { // Every database after "meta".
    auto name = db_name(static_cast<db>(i));
    auto handle = t.open_db(name, !opts_.read_only);
    if (!handle)
      return handle.error();
    if (!*handle)
      return make_error(error::store_failure,
        "store at " + dir_ + " has no database \"" + name + "\"");
    dbs_[i] = **handle;
  }
  return caf::unit;
}

caf::expected<void> store::create_schema(txn& t) {
  // No "meta" database: a new environment, or one that is not an eat store.
  auto main = t.open_db(nullptr, false);
  if (!main)
    return main.error();
  auto entries = t.entries(**main);
  if (!entries)
    return entries.error();
  if (*entries != 0)
    return make_error(error::store_version_mismatch,
      "store at " + dir_
        + " is not an eat store: it holds other LMDB data and"
          " no schema_version");
  if (opts_.read_only)
    return make_error(error::store_version_mismatch,
      "store at " + dir_ + " was never initialised: it has no schema_version");
  for (size_t i = 0; i < db_count; ++i) {
    auto handle = t.open_db(db_name(static_cast<db>(i)), true);
    if (!handle)
      return handle.error();
    dbs_[i] = **handle;
  }
  return t.put(
    handle(db::meta), schema_version_key, wire::encode(schema_version));
}

caf::expected<void> store::check_schema(txn& t) {
  auto raw = t.get(handle(db::meta), schema_version_key);
  if (!raw)
    return raw.error();
  if (!*raw)
    return make_error(error::store_version_mismatch,
      "store at " + dir_ + " is not an eat store: it has no schema_version");
  auto version = wire::decode<uint64_t>(**raw);
  if (!version)
    return make_error(error::store_version_mismatch,
      "store at " + dir_ + " has an unreadable schema_version ("
        + render(version.error()) + ")");
  if (*version != schema_version)
    return make_error(error::store_version_mismatch,
      "store at " + dir_ + " has schema version " + std::to_string(*version)
        + ", this eat reads version " + std::to_string(schema_version));
  return caf::unit;
}

// -- meta and readers ---------------------------------------------------------

caf::expected<void> store::put_meta(
  std::string_view key, std::string_view value) {
  if (key == schema_version_key)
    return make_error(error::store_failure,
      "meta key \"schema_version\" is reserved: the store sets"
      " it when it creates the store");
  return update([&](txn& t) {
    return t.put(handle(db::meta), key, value);
  });
}

caf::expected<std::optional<std::string>> store::get_meta(
  std::string_view key) const {
  using result_type = caf::expected<std::optional<std::string>>;
  return view([&](txn& t) -> result_type {
    auto value = t.get(handle(db::meta), key);
    if (!value)
      return value.error();
    if (!*value)
      return std::optional<std::string>{};
    return std::optional<std::string>{std::string{**value}};
  });
}

caf::expected<int> store::check_readers() {
  int dead = 0;
  if (auto rc = mdb_reader_check(env_.get(), &dead); rc != MDB_SUCCESS)
    return lmdb_error("mdb_reader_check", rc, dir_);
  return dead;
}

uint64_t store::map_size() const {
  std::shared_lock lock{map_mutex_};
  return current_map_size(env_.get());
}

// -- transactions and growth --------------------------------------------------

caf::expected<txn> store::begin(unsigned flags) const {
  for (int attempt = 1;; ++attempt) {
    std::shared_lock lock{map_mutex_};
    MDB_txn* handle = nullptr;
    auto rc = mdb_txn_begin(env_.get(), nullptr, flags, &handle);
    if (rc == MDB_SUCCESS)
      return txn{handle, std::move(lock), dir_};
    if (rc != MDB_MAP_RESIZED || attempt == max_resize_attempts)
      return lmdb_error("mdb_txn_begin", rc, dir_);
    lock.unlock();
    if (auto ok = adopt_map_size(); !ok)
      return ok.error();
  }
}

caf::expected<void> store::adopt_map_size() const {
  // Another process grew the map: take the size its meta page records.
  std::unique_lock lock{map_mutex_};
  if (auto rc = mdb_env_set_mapsize(env_.get(), 0); rc != MDB_SUCCESS)
    return lmdb_error("mdb_env_set_mapsize", rc, dir_);
  return caf::unit;
}

caf::expected<void> store::run_update(const update_fn& fn) {
  if (opts_.read_only)
    return make_error(
      error::store_failure, "store at " + dir_ + " is open read-only");
  std::lock_guard guard{write_mutex_};
  for (;;) {
    caf::expected<void> ok = caf::unit;
    bool map_full = false;
    {
      auto t = begin(0);
      if (!t)
        return t.error();
      ok = fn(*t);
      if (ok)
        ok = t->commit();
      map_full = !ok && t->map_full();
    } // Aborts an uncommitted transaction and releases its map lock.
    if (!map_full)
      return ok;
    if (auto grown = grow(); !grown)
      return grown;
  }
}

caf::expected<void> store::grow() {
  std::unique_lock lock{map_mutex_};
  auto current = current_map_size(env_.get());
  if (current >= opts_.max_map_size)
    return make_error(error::store_failure,
      "store at " + dir_ + " is full: its map reached "
        + std::to_string(current) + " bytes, the limit set by max_map_size");
  auto next
    = current > opts_.max_map_size / 2 ? opts_.max_map_size : current * 2;
  if (auto rc = mdb_env_set_mapsize(env_.get(), next); rc != MDB_SUCCESS)
    return lmdb_error("mdb_env_set_mapsize", rc, dir_);
  return caf::unit;
}

} // namespace eat::persistence
