#include "tests/persistence/raw_lmdb.hpp"

#include <memory>
#include <stdexcept>
#include <string>

#include <lmdb.h>
#include <unistd.h>

namespace eat::test {

namespace {

struct env_closer {
  void operator()(MDB_env* env) const noexcept {
    mdb_env_close(env);
  }
};

using env_ptr = std::unique_ptr<MDB_env, env_closer>;

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS)
    throw std::runtime_error(std::string{what} + ": " + mdb_strerror(rc));
}

env_ptr open_raw(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  MDB_env* raw = nullptr;
  check(mdb_env_create(&raw), "mdb_env_create");
  env_ptr env{raw};
  check(mdb_env_set_maxdbs(raw, 16), "mdb_env_set_maxdbs");
  check(mdb_env_open(raw, dir.c_str(), 0, 0644), "mdb_env_open");
  return env;
}

MDB_val to_val(std::string_view bytes) {
  return MDB_val{bytes.size(), const_cast<char*>(bytes.data())};
}

} // namespace

std::string raw_key(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(
      std::stoi(std::string{hex.substr(i, 2)}, nullptr, 16));
  return out;
}

void raw_create(const std::filesystem::path& dir) {
  open_raw(dir);
}

void raw_put(const std::filesystem::path& dir, const char* db,
  std::string_view key, std::string_view value) {
  auto env = open_raw(dir);
  MDB_txn* txn = nullptr;
  check(mdb_txn_begin(env.get(), nullptr, 0, &txn), "mdb_txn_begin");
  MDB_dbi dbi = 0;
  auto k = to_val(key);
  auto v = to_val(value);
  int rc = mdb_dbi_open(txn, db, MDB_CREATE, &dbi);
  if (rc == MDB_SUCCESS)
    rc = mdb_put(txn, dbi, &k, &v, 0);
  if (rc != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    check(rc, "raw_put");
  }
  check(mdb_txn_commit(txn), "mdb_txn_commit");
}

void raw_delete(
  const std::filesystem::path& dir, const char* db, std::string_view key) {
  auto env = open_raw(dir);
  MDB_txn* txn = nullptr;
  check(mdb_txn_begin(env.get(), nullptr, 0, &txn), "mdb_txn_begin");
  MDB_dbi dbi = 0;
  auto k = to_val(key);
  int rc = mdb_dbi_open(txn, db, 0, &dbi);
  if (rc == MDB_SUCCESS)
    rc = mdb_del(txn, dbi, &k, nullptr);
  if (rc != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    check(rc, "raw_delete");
  }
  check(mdb_txn_commit(txn), "mdb_txn_commit");
}

void hold_reader(const std::filesystem::path& dir, bool read, int notify_fd) {
  auto env = open_raw(dir);
  MDB_txn* txn = nullptr;
  if (read)
    check(mdb_txn_begin(env.get(), nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
  char byte = 1;
  if (write(notify_fd, &byte, 1) != 1)
    _exit(2);
  for (;;)
    pause(); // Until the parent kills this process.
}

} // namespace eat::test
