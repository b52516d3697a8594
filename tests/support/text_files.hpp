// Whole text files in tests: read, write and edit them. A failure throws,
// which fails the test that called.

#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace eat::test {

/// The bytes of `file`; "" when it cannot be read.
inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in{file, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Writes `text` to `file` (replacing it), creating its parent directories.
inline void write_text(
  const std::filesystem::path& file, const std::string& text) {
  if (file.has_parent_path())
    std::filesystem::create_directories(file.parent_path());
  std::ofstream out{file, std::ios::binary | std::ios::trunc};
  out << text;
  if (!out.good())
    throw std::runtime_error("cannot write " + file.string());
}

/// `text` with its one occurrence of `from` replaced by `to`; throws when
/// `from` occurs no time or more than once (an edit that would not change
/// the text, or not the intended place).
inline std::string replace_once(
  std::string text, const std::string& from, const std::string& to) {
  auto i = text.find(from);
  if (i == std::string::npos)
    throw std::invalid_argument("replace_once: '" + from + "' not found");
  if (text.find(from, i + 1) != std::string::npos)
    throw std::invalid_argument("replace_once: '" + from + "' occurs twice");
  return text.replace(i, from.size(), to);
}

} // namespace eat::test
