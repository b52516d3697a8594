// The baseline of the store benchmark: a bare LMDB environment opened like a
// store (same map size, MDB_NOTLS, synchronous commits) with one named
// database, written with plain mdb_put calls. Failures throw
// std::runtime_error. Single-threaded; owned by the benchmark.

#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <lmdb.h>

namespace eat::bench {

/// A bare LMDB environment with the database "events".
class raw_env {
public:
  /// Creates the environment in `dir` (created when missing).
  explicit raw_env(const std::filesystem::path& dir);

  /// Appends values[begin, end) under the big-endian keys begin + 1, ... in
  /// one transaction, with MDB_APPEND as the event log does.
  void append(const std::vector<std::string>& values, size_t begin, size_t end);

private:
  struct env_closer {
    void operator()(MDB_env* env) const noexcept {
      mdb_env_close(env);
    }
  };

  std::unique_ptr<MDB_env, env_closer> env_;
  MDB_dbi dbi_ = 0;
};

} // namespace eat::bench
