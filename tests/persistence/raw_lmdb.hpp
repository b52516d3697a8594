// Test helpers that write LMDB environments directly, bypassing the store, to
// build what eat did not write: foreign environments, other schema versions,
// corrupt records, and readers in other processes.
//
// LMDB forbids opening one environment twice in a process: call raw_put only
// while no store on `dir` is open in this process. hold_reader is meant for a
// forked child. Failures throw std::runtime_error.

#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace eat::test {

/// The raw bytes a hex string names (a blob's key from its SHA-256 hex).
std::string raw_key(std::string_view hex);

/// Creates an LMDB environment in `dir` that holds no data.
void raw_create(const std::filesystem::path& dir);

/// Stores `value` under `key` in database `db` (nullptr: the main database)
/// of the environment in `dir`, creating the environment and the database.
void raw_put(const std::filesystem::path& dir, const char* db,
  std::string_view key, std::string_view value);

/// Deletes `key` from database `db` of the environment in `dir`, bypassing
/// the store (which must not be open in this process).
void raw_delete(
  const std::filesystem::path& dir, const char* db, std::string_view key);

/// Opens the environment in `dir`, begins a read transaction when `read`,
/// writes one byte to `notify_fd`, then waits for a signal to end it.
[[noreturn]] void hold_reader(
  const std::filesystem::path& dir, bool read, int notify_fd);

} // namespace eat::test
