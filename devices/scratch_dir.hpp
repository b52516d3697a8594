// A uniquely named directory that is removed, with everything in it, when its
// owner lets go of it: the compiler's per-compile build directory and the
// runner's per-evaluation working directory. Move-only; one owner thread.

#pragma once

#include <filesystem>
#include <string>

#include <caf/expected.hpp>

namespace eat::devices {

/// Owns a fresh directory below some parent; removes it on destruction.
class scratch_dir {
public:
  /// Creates `<parent>/<prefix>XXXXXX` (mkdtemp), mode 0700.
  static caf::expected<scratch_dir> make(
    const std::filesystem::path& parent, const std::string& prefix);

  scratch_dir(scratch_dir&& other) noexcept;
  scratch_dir& operator=(scratch_dir&& other) noexcept;
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir();

  const std::filesystem::path& path() const {
    return path_;
  }

  /// Removes the directory now; a candidate may have left read-only
  /// subdirectories, so permissions are restored first. Returns whether the
  /// directory is gone.
  bool remove();

  /// Removes `path` and everything in it, restoring permissions where a
  /// candidate took them away; true if it is gone.
  static bool remove_tree(const std::filesystem::path& path);

private:
  explicit scratch_dir(std::filesystem::path path);

  std::filesystem::path path_;
};

} // namespace eat::devices
