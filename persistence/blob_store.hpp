// Content-addressed blobs: the bytes of every file version, kept once per
// distinct content in the store's "blobs" database under their SHA-256
// (docs/store-layout.md, "Files and blobs"). Callers name a blob by the
// lowercase hex of that digest (64 characters); the key is its 32 raw bytes.
//
// Ownership: a thin view on a store, which must outlive it; make as many as
// needed. In a running eat process the store actor writes (through
// file_tree); anyone reads.
//
// Thread safety: as the store's. `get` may run on any thread; the *_in
// functions run on the thread that owns the transaction they are given.
//
// Blobs are never deleted: a file version refers to its blob for ever.
// LMDB keeps no checksums, so `verify` re-hashes every blob to find bytes
// damaged on disk.

#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "persistence/store.hpp"

namespace eat::persistence {

/// Size of a SHA-256 digest in bytes (the key of a blob).
constexpr size_t blob_key_size = 32;

/// Returns the lowercase hex SHA-256 of `bytes` (64 characters).
std::string blob_hash(std::string_view bytes);

/// The blobs database of a store: SHA-256 to bytes, deduplicated.
class blob_store {
public:
  /// A view on the blobs of `s`.
  explicit blob_store(store& s);

  /// Stores `bytes` in the write transaction `t` unless a blob with the same
  /// hash and bytes is there already (then nothing is written), and returns
  /// the hex hash. A stored blob whose bytes no longer match its hash (damage
  /// on disk) is overwritten with the right ones.
  caf::expected<std::string> put_in(txn& t, std::string_view bytes) const;

  /// Returns a copy of the blob named `hash_hex`, or nullopt when there is
  /// none; error::invalid_arguments when `hash_hex` is not 64 hex digits.
  caf::expected<std::optional<std::string>> get(
    std::string_view hash_hex) const;

  /// Returns the blob named `hash_hex` in `t`, or nullopt; the view is valid
  /// until `t` ends.
  caf::expected<std::optional<std::string_view>> get_in(
    txn& t, std::string_view hash_hex) const;

  /// Re-hashes every blob in `t`; returns one line per blob whose key is
  /// malformed or whose bytes hash to something else (empty: all intact).
  caf::expected<std::vector<std::string>> verify(txn& t) const;

private:
  store& store_;
};

} // namespace eat::persistence
