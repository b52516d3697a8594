// A file to write into the run's versioned namespace (docs/store-layout.md),
// sent to the store actor together with the event it belongs to, so that
// both are committed in one transaction.

#pragma once

#include <string>

#include "actors/protocol/describe.hpp"

namespace eat {

/// One write of one file.
struct file_write {
  /// Absolute namespace path, e.g. "/teams/t1/candidates/t1-c0003/kernel.cpp".
  std::string path;
  std::string bytes;
  /// Who wrote it, e.g. "t1" or "supervisor".
  std::string author;
};
EAT_DESCRIBE(file_write, path, bytes, author)

} // namespace eat
