#include "persistence/txn.hpp"

#include <string>

#include "persistence/lmdb_error.hpp"

namespace eat::persistence {

namespace {

MDB_val to_val(std::string_view bytes) {
  return MDB_val{bytes.size(), const_cast<char*>(bytes.data())};
}

std::string_view from_val(const MDB_val& val) {
  return {static_cast<const char*>(val.mv_data), val.mv_size};
}

} // namespace

// -- txn ----------------------------------------------------------------------

txn::txn(MDB_txn* handle, std::shared_lock<std::shared_mutex> lock,
  std::string_view dir)
  : handle_(handle), lock_(std::move(lock)), dir_(dir) {
  // nop
}

txn::txn(txn&& other) noexcept
  : handle_(std::exchange(other.handle_, nullptr)),
    lock_(std::move(other.lock_)), dir_(other.dir_),
    map_full_(other.map_full_) {
  // nop
}

txn::~txn() {
  if (handle_ != nullptr)
    mdb_txn_abort(handle_);
}

caf::error txn::fail(std::string_view op, int rc) {
  if (rc == MDB_MAP_FULL)
    map_full_ = true;
  return lmdb_error(op, rc, dir_);
}

caf::expected<std::optional<MDB_dbi>> txn::open_db(
  const char* name, bool create) {
  MDB_dbi dbi = 0;
  auto rc = mdb_dbi_open(handle_, name, create ? MDB_CREATE : 0, &dbi);
  if (rc == MDB_NOTFOUND)
    return std::optional<MDB_dbi>{};
  if (rc != MDB_SUCCESS)
    return fail(
      std::string{"mdb_dbi_open("} + (name ? name : "main") + ")", rc);
  return std::optional<MDB_dbi>{dbi};
}

caf::expected<size_t> txn::entries(MDB_dbi db) {
  MDB_stat st;
  if (auto rc = mdb_stat(handle_, db, &st); rc != MDB_SUCCESS)
    return fail("mdb_stat", rc);
  return size_t{st.ms_entries};
}

caf::expected<std::optional<std::string_view>> txn::get(
  MDB_dbi db, std::string_view key) {
  auto k = to_val(key);
  MDB_val v;
  auto rc = mdb_get(handle_, db, &k, &v);
  if (rc == MDB_NOTFOUND)
    return std::optional<std::string_view>{};
  if (rc != MDB_SUCCESS)
    return fail("mdb_get", rc);
  return std::optional<std::string_view>{from_val(v)};
}

caf::expected<void> txn::put(
  MDB_dbi db, std::string_view key, std::string_view value, unsigned flags) {
  auto k = to_val(key);
  auto v = to_val(value);
  if (auto rc = mdb_put(handle_, db, &k, &v, flags); rc != MDB_SUCCESS)
    return fail("mdb_put", rc);
  return caf::unit;
}

caf::expected<cursor> txn::open_cursor(MDB_dbi db) {
  MDB_cursor* handle = nullptr;
  if (auto rc = mdb_cursor_open(handle_, db, &handle); rc != MDB_SUCCESS)
    return fail("mdb_cursor_open", rc);
  return cursor{handle, dir_};
}

caf::expected<void> txn::commit() {
  // mdb_txn_commit frees the transaction even when it fails.
  auto rc = mdb_txn_commit(std::exchange(handle_, nullptr));
  lock_ = {};
  if (rc != MDB_SUCCESS)
    return fail("mdb_txn_commit", rc);
  return caf::unit;
}

// -- cursor -------------------------------------------------------------------

cursor::cursor(MDB_cursor* handle, std::string_view dir)
  : handle_(handle), dir_(dir) {
  // nop
}

cursor::cursor(cursor&& other) noexcept
  : handle_(std::exchange(other.handle_, nullptr)), dir_(other.dir_) {
  // nop
}

cursor::~cursor() {
  if (handle_ != nullptr)
    mdb_cursor_close(handle_);
}

caf::expected<std::optional<cursor::entry>> cursor::move(
  MDB_cursor_op op, std::string_view key, std::string_view what) {
  auto k = to_val(key);
  MDB_val v{0, nullptr};
  auto rc = mdb_cursor_get(handle_, &k, &v, op);
  if (rc == MDB_NOTFOUND)
    return std::optional<entry>{};
  if (rc != MDB_SUCCESS)
    return lmdb_error(what, rc, dir_);
  return std::optional<entry>{entry{from_val(k), from_val(v)}};
}

caf::expected<std::optional<cursor::entry>> cursor::seek(std::string_view key) {
  return move(MDB_SET_RANGE, key, "mdb_cursor_get(MDB_SET_RANGE)");
}

caf::expected<std::optional<cursor::entry>> cursor::next() {
  return move(MDB_NEXT, {}, "mdb_cursor_get(MDB_NEXT)");
}

caf::expected<std::optional<cursor::entry>> cursor::first() {
  return move(MDB_FIRST, {}, "mdb_cursor_get(MDB_FIRST)");
}

caf::expected<std::optional<cursor::entry>> cursor::last() {
  return move(MDB_LAST, {}, "mdb_cursor_get(MDB_LAST)");
}

} // namespace eat::persistence
