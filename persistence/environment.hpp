// Opening the LMDB environment of a store directory, safely: the directory is
// created when missing (unless read-only), and a data file that LMDB cannot
// read, or that is shorter than the pages it refers to (a truncated copy),
// is refused with an error instead of being mapped and crashing the process.
//
// Used by store::open only; the environment belongs to the store that opened
// it. Thread safety: open_environment may run on any thread.

#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include <caf/expected.hpp>
#include <lmdb.h>

namespace eat::persistence {

/// Closes an LMDB environment.
struct env_closer {
  void operator()(MDB_env* env) const noexcept {
    mdb_env_close(env);
  }
};

/// An open LMDB environment.
using env_ptr = std::unique_ptr<MDB_env, env_closer>;

/// Named databases an environment has room for.
constexpr unsigned max_named_dbs = 16;

/// Opens the environment in `dir` with MDB_NOTLS and room for max_named_dbs
/// named databases. Its map is `map_size` bytes, or the larger size an
/// existing environment recorded (it grew, see store::update).
caf::expected<env_ptr> open_environment(
  const std::filesystem::path& dir, uint64_t map_size, bool read_only);

/// Returns the current size of the environment's map in bytes.
uint64_t current_map_size(MDB_env* env);

} // namespace eat::persistence
