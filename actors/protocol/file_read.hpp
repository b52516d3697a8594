// Reading a whole file that someone else may have put in place (a config,
// a task's source, an agent's kernel.cpp): only a regular file, never
// waiting on a named pipe, never more than a limit.

#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace eat {

/// The contents of a file, or why it could not be read.
struct file_contents {
  bool ok = false;
  std::string text;
  /// strerror's text, "a named pipe, not a regular file", "a symbolic
  /// link, not a regular file" or "larger than N MiB".
  std::string why;
};

/// Reads the whole regular file `file` of at most `max_bytes` bytes;
/// without `follow_links`, a symbolic link is refused, not followed.
file_contents read_regular_file(const std::filesystem::path& file,
  size_t max_bytes, bool follow_links = true);

} // namespace eat
