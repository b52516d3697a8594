#include "bench/raw_env.hpp"

#include <stdexcept>

#include "persistence/keys.hpp"

namespace eat::bench {

namespace {

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS)
    throw std::runtime_error(std::string{what} + ": " + mdb_strerror(rc));
}

} // namespace

raw_env::raw_env(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  MDB_env* env = nullptr;
  check(mdb_env_create(&env), "mdb_env_create");
  env_.reset(env);
  check(mdb_env_set_maxdbs(env, 16), "mdb_env_set_maxdbs");
  check(mdb_env_set_mapsize(env, 64ull << 30), "mdb_env_set_mapsize");
  check(mdb_env_open(env, dir.c_str(), MDB_NOTLS, 0644), "mdb_env_open");
  MDB_txn* t = nullptr;
  check(mdb_txn_begin(env, nullptr, 0, &t), "mdb_txn_begin");
  if (auto rc = mdb_dbi_open(t, "events", MDB_CREATE, &dbi_);
      rc != MDB_SUCCESS) {
    mdb_txn_abort(t);
    check(rc, "mdb_dbi_open");
  }
  check(mdb_txn_commit(t), "mdb_txn_commit");
}

void raw_env::append(
  const std::vector<std::string>& values, size_t begin, size_t end) {
  MDB_txn* t = nullptr;
  check(mdb_txn_begin(env_.get(), nullptr, 0, &t), "mdb_txn_begin");
  for (size_t i = begin; i < end; ++i) {
    auto key = persistence::encode_seq_key(i + 1);
    MDB_val k{key.size(), key.data()};
    MDB_val v{values[i].size(), const_cast<char*>(values[i].data())};
    if (auto rc = mdb_put(t, dbi_, &k, &v, MDB_APPEND); rc != MDB_SUCCESS) {
      mdb_txn_abort(t);
      check(rc, "mdb_put");
    }
  }
  check(mdb_txn_commit(t), "mdb_txn_commit");
}

} // namespace eat::bench
