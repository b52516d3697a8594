// Paths of the versioned file namespace (persistence/file_tree.hpp), and how
// a path and a version become a key of the store's "files" database
// (docs/store-layout.md, "Files and blobs").
//
// A namespace path is absolute ("/teams/t1/notes.md"): components separated
// by single slashes, none empty, none "." or "..", no NUL or other control
// character, no backslash, each component at most 255 bytes and the whole
// path at most 4096. A trailing slash is dropped. "/" is the root: a valid
// directory, never a file. Bytes from 0x80 up are taken as they come (UTF-8
// by convention, not checked).
//
// Thread safety: stateless; usable from any thread.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace eat::persistence {

/// Longest component of a namespace path, in bytes.
constexpr size_t max_fs_component = 255;

/// Longest namespace path, in bytes.
constexpr size_t max_fs_path = 4096;

/// Returns `p` in normal form ("/a/b"), or error::invalid_arguments naming
/// the rule that `p` breaks.
caf::expected<std::string> normalize_fs_path(std::string_view p);

/// Returns `p` quoted for an error message, control bytes as \xNN.
std::string quote_fs_path(std::string_view p);

/// Returns the key of `version` of the normalised `path`: the path's bytes,
/// a NUL byte, then the version as 8 big-endian bytes.
std::string encode_file_key(std::string_view path, uint64_t version);

/// Returns the key prefix shared by every version of `path` (path + NUL).
std::string file_key_prefix(std::string_view path);

/// A key of the files database, split into its parts.
struct file_key {
  /// Points into the key it was decoded from.
  std::string_view path;
  uint64_t version = 0;
};

/// Splits a key written by encode_file_key; nullopt when it has another
/// shape (too short, or no NUL before the version).
std::optional<file_key> decode_file_key(std::string_view key);

} // namespace eat::persistence
