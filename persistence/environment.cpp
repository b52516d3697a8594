#include "persistence/environment.hpp"

#include <algorithm>
#include <string>
#include <system_error>

#include <fcntl.h>

#include "actors/protocol/error.hpp"
#include "persistence/lmdb_error.hpp"

namespace eat::persistence {

namespace fs = std::filesystem;

namespace {

/// Checks the directory before LMDB sees it; creates it unless read-only.
/// Returns whether it holds a data file already.
caf::expected<bool> prepare_dir(const fs::path& dir, bool read_only) {
  std::error_code ec;
  auto data = dir / "data.mdb";
  if (read_only) {
    if (!fs::exists(data, ec))
      return make_error(error::store_failure,
        "no eat store at " + dir.string()
          + " (a read-only open needs an existing store)");
  } else if (fs::create_directories(dir, ec); ec) {
    return make_error(error::store_failure,
      "cannot create store directory " + dir.string() + ": " + ec.message());
  }
  auto size = fs::file_size(data, ec);
  if (ec)
    return false;
  // LMDB would take an empty data file for a new environment.
  if (size == 0)
    return make_error(error::store_failure,
      data.string()
        + " is empty: a truncated store, or one whose creation"
          " was interrupted; remove it to start afresh");
  return true;
}

/// Rejects a data file shorter than the pages its meta page refers to, which
/// LMDB would map and then crash on (SIGBUS) when reading past its end.
caf::expected<void> check_file_size(MDB_env* env, const fs::path& dir) {
  MDB_envinfo info;
  MDB_stat st;
  if (auto rc = mdb_env_info(env, &info); rc != MDB_SUCCESS)
    return lmdb_error("mdb_env_info", rc, dir.string());
  if (auto rc = mdb_env_stat(env, &st); rc != MDB_SUCCESS)
    return lmdb_error("mdb_env_stat", rc, dir.string());
  auto data = dir / "data.mdb";
  std::error_code ec;
  auto size = fs::file_size(data, ec);
  if (ec)
    return make_error(error::store_failure,
      "cannot read the size of " + data.string() + ": " + ec.message());
  auto needed = (uint64_t{info.me_last_pgno} + 1) * st.ms_psize;
  if (size < needed)
    return make_error(error::store_failure,
      data.string() + " is truncated: it has " + std::to_string(size)
        + " bytes, its pages need " + std::to_string(needed));
  return caf::unit;
}

/// Opens `dir` mapped at `map_size` bytes, or (0) at what the environment's
/// meta page records.
caf::expected<env_ptr> open_mapped(
  const std::string& where, uint64_t map_size, bool read_only) {
  MDB_env* raw = nullptr;
  if (auto rc = mdb_env_create(&raw); rc != MDB_SUCCESS)
    return lmdb_error("mdb_env_create", rc, where);
  env_ptr env{raw}; // Also closes the handle when mdb_env_open fails.
  if (auto rc = mdb_env_set_maxdbs(raw, max_named_dbs); rc != MDB_SUCCESS)
    return lmdb_error("mdb_env_set_maxdbs", rc, where);
  if (map_size > 0)
    if (auto rc = mdb_env_set_mapsize(raw, map_size); rc != MDB_SUCCESS)
      return lmdb_error("mdb_env_set_mapsize", rc, where);
  unsigned flags = MDB_NOTLS | (read_only ? MDB_RDONLY : 0u);
  if (auto rc = mdb_env_open(raw, where.c_str(), flags, 0644);
      rc != MDB_SUCCESS)
    return lmdb_error("mdb_env_open", rc, where);
  // Programs eat starts do not inherit the store's file, open for
  // writing (its spawns also close what they do not pass on).
  mdb_filehandle_t fd = -1;
  if (mdb_env_get_fd(raw, &fd) == MDB_SUCCESS && fd >= 0)
    ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
  return env;
}

} // namespace

caf::expected<env_ptr> open_environment(
  const fs::path& dir, uint64_t map_size, bool read_only) {
  auto existing = prepare_dir(dir, read_only);
  if (!existing)
    return existing.error();
  auto where = dir.string();
  // An existing environment keeps the (possibly grown) size its meta page
  // records; a new one starts at map_size.
  auto env = open_mapped(where, *existing ? 0 : map_size, read_only);
  if (!env && *existing) {
    // A damaged meta page can record exabytes, which LMDB cannot map
    // ("Cannot allocate memory"): map map_size or the file's size,
    // whichever is larger, instead. The store grows the map when it fills.
    std::error_code ec;
    auto bytes = fs::file_size(dir / "data.mdb", ec);
    auto size = std::max<uint64_t>(map_size, ec ? 0 : bytes);
    if (auto retry = open_mapped(where, size, read_only))
      env = std::move(retry);
  }
  if (!env)
    return env.error();
  auto* raw = env->get();
  if (auto ok = check_file_size(raw, dir); !ok)
    return ok.error();
  if (current_map_size(raw) < map_size)
    if (auto rc = mdb_env_set_mapsize(raw, map_size); rc != MDB_SUCCESS)
      return lmdb_error("mdb_env_set_mapsize", rc, where);
  return env;
}

uint64_t current_map_size(MDB_env* env) {
  MDB_envinfo info;
  mdb_env_info(env, &info); // Cannot fail for an open environment.
  return info.me_mapsize;
}

} // namespace eat::persistence
