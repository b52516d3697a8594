#include "devices/scratch_dir.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <stdlib.h>

#include "actors/protocol/error.hpp"

namespace eat::devices {

namespace fs = std::filesystem;

caf::expected<scratch_dir> scratch_dir::make(
  const fs::path& parent, const std::string& prefix) {
  auto pattern = (parent / (prefix + "XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    return make_error(error::io_failure, "cannot create a directory like "
                                           + pattern + ": "
                                           + std::strerror(errno));
  return scratch_dir{fs::path{buf.data()}};
}

scratch_dir::scratch_dir(fs::path path) : path_(std::move(path)) {
  // nop
}

scratch_dir::scratch_dir(scratch_dir&& other) noexcept
  : path_(std::move(other.path_)) {
  other.path_.clear();
}

scratch_dir& scratch_dir::operator=(scratch_dir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

scratch_dir::~scratch_dir() {
  remove();
}

bool scratch_dir::remove() {
  if (path_.empty())
    return true;
  if (!remove_tree(path_))
    return false;
  path_.clear();
  return true;
}

bool scratch_dir::remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) {
    // A hostile candidate may have made subdirectories unwritable.
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec))
        fs::permissions(
          it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    ec.clear();
    fs::remove_all(path, ec);
  }
  return !ec;
}

} // namespace eat::devices
