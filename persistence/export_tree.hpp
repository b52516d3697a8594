// Export of a versioned file namespace (file_tree.hpp) as an ordinary
// directory tree: the latest version of every file, at its path below an
// output directory. `eat fs export` calls it; reviewers then read a run's
// learning document, notes and kernels with ordinary tools.
//
// Ownership: a free function; the caller owns the file_tree and the output
// directory. Thread safety: as file_tree's reads; usable from any thread.
//
// Caveats, each with its fix:
// - The output directory must be absent or empty, so an export never mixes
//   with older files: remove or rename an earlier export first.
// - A failure part-way (disk full, permissions) leaves the files written so
//   far: export into a fresh directory and discard it on error.
// - Each file is read in its own read transaction, at the version `all()`
//   listed, so a write during the export does not mix versions of a file;
//   the export shows the namespace as it was when the export began.

#pragma once

#include <cstddef>
#include <filesystem>

#include <caf/expected.hpp>

#include "persistence/file_tree.hpp"

namespace eat::persistence {

/// Writes the latest version of every file of `tree` below `out_dir`,
/// creating directories as needed, and returns the number of files written.
/// `out_dir` must be absent or an empty directory (else invalid_arguments);
/// a path that would land outside `out_dir` is refused (store_failure);
/// file system failures are io_failure naming the file.
caf::expected<size_t> export_tree(
  const file_tree& tree, const std::filesystem::path& out_dir);

} // namespace eat::persistence
