// The versioned file namespace of a run: paths like "/learning.md" or
// "/teams/t1/candidates/c000017/kernel.cpp", each write a new version, the
// bytes kept as content-addressed blobs (blob_store.hpp). It lives in the
// store's "files" database; docs/store-layout.md ("Files and blobs") gives
// the encoding: key = path, NUL, 8-byte big-endian version; value = the
// MessagePack `file_version`.
//
// Ownership: a thin view on a store, which must outlive it; make as many as
// needed. In a running eat process the store actor writes, usually with
// put_in inside the transaction that appends the matching event; `eat fs`
// and other readers use get/log/list/all from any thread or process.
//
// Thread safety: as the store's. Reads open their own read transaction and
// may run on any thread; put runs its own write transaction (serialised by
// the store); put_in runs on the thread that owns the caller's transaction.
//
// Rules and caveats, each with its fix:
// - Paths are checked and normalised by normalize_fs_path (fs_path.hpp).
//   The store adds one limit: LMDB keys are at most 511 bytes, so a stored
//   path has at most max_stored_path (502) bytes; longer ones are refused.
// - Directories exist only through the files under them: a path cannot be a
//   file and a directory at once, so put refuses "/a/b" when "/a" is a file
//   and "/a" when files live under "/a/". An export is then always a valid
//   directory tree.
// - Finding the latest version walks the versions of that path (the cursor
//   has no MDB_PREV), so put and get cost O(versions of the path). Paths are
//   written a handful of times each in a run; a path rewritten many
//   thousands of times should get a new name per round instead.
// - verify and all read the whole namespace in one read transaction, which
//   pins old pages while it runs: call them from tools, not in a hot loop.

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/describe.hpp"
#include "persistence/blob_store.hpp"
#include "persistence/store.hpp"

namespace eat::persistence {

/// Longest path the files database can hold: LMDB's 511-byte key limit less
/// the NUL and the 8-byte version.
constexpr size_t max_stored_path = 511 - 1 - 8;

/// One version of one file.
struct file_version {
  /// 1 for the first write of a path, then 2, 3, ...
  uint64_t version = 0;
  /// Lowercase hex SHA-256 of the bytes: the blob's name.
  std::string blob;
  /// Number of bytes.
  uint64_t size = 0;
  /// Time of the write, milliseconds since the Unix epoch.
  int64_t unix_ms = 0;
  /// Who wrote it, e.g. "team t1 / agent a2" or "supervisor".
  std::string author;
};
EAT_DESCRIBE(file_version, version, blob, size, unix_ms, author)

/// An entry of a directory listing.
struct dir_entry {
  /// The last component of the entry's path.
  std::string name;
  bool is_dir = false;
  /// Latest version and its size; both 0 for a directory.
  uint64_t version = 0;
  uint64_t size = 0;
};

/// The versioned file namespace in a store's "files" database.
class file_tree {
public:
  /// Source of write times, in milliseconds since the Unix epoch.
  using clock_fn = std::function<int64_t()>;

  /// A view on the files of `s`, stamping writes with `clock`.
  explicit file_tree(store& s, clock_fn clock = default_clock());

  /// New version of `path` with `bytes` (blob deduplicated), in its own
  /// transaction. Returns the version (1, 2, ...).
  caf::expected<uint64_t> put(
    std::string_view path, std::string_view bytes, std::string_view author);

  /// The same inside the caller's write transaction (the store actor commits
  /// an event and its files together); nothing is kept unless it commits.
  caf::expected<uint64_t> put_in(txn& t, std::string_view path,
    std::string_view bytes, std::string_view author);

  /// Bytes of the latest version, or of `version` (0 = latest). A missing
  /// path or version is error::invalid_arguments naming it; a missing blob
  /// is store_failure naming path, version and hash.
  caf::expected<std::string> get(
    std::string_view path, uint64_t version = 0) const;

  /// Every version of `path`, oldest first; invalid_arguments when there is
  /// no file at `path`.
  caf::expected<std::vector<file_version>> log(std::string_view path) const;

  /// Immediate children of directory `dir` ("/" for the root), sorted by
  /// name; directories are implied by the files under them. The root is
  /// always a directory (empty in a new store); any other `dir` without
  /// files under it, or that is a file, is invalid_arguments.
  caf::expected<std::vector<dir_entry>> list(std::string_view dir) const;

  /// Every file's path with its latest version, sorted by path.
  caf::expected<std::vector<std::pair<std::string, file_version>>> all() const;

  /// Checks every file version: its record decodes, its blob exists and
  /// hashes to its name and has its size. Returns the problems (empty =
  /// consistent), each naming path, version and hash.
  caf::expected<std::vector<std::string>> verify() const;

private:
  static clock_fn default_clock();

  store& store_;
  blob_store blobs_;
  clock_fn clock_;
};

} // namespace eat::persistence
