// A fresh directory under the system temp dir (or a given folder) for one
// test, removed with everything in it when the test ends. Owned by the
// test that makes it.

#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace eat::test {

/// A temporary directory, removed on destruction.
class temp_dir {
public:
  temp_dir() : temp_dir{std::filesystem::temp_directory_path()} {}

  /// A fresh directory in `parent` (a CLI's /tmp is its own: what it must
  /// find lies elsewhere).
  explicit temp_dir(const std::filesystem::path& parent) {
    auto pattern = (parent / "eat-store-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }

  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  /// The directory.
  const std::filesystem::path& path() const noexcept {
    return path_;
  }

private:
  std::filesystem::path path_;
};

} // namespace eat::test
