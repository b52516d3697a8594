#include "persistence/export_tree.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "persistence/fs_path.hpp"

namespace eat::persistence {

namespace fs = std::filesystem;

namespace {

caf::error io_error(const std::string& what, int err) {
  return make_error(error::io_failure, what + ": " + std::strerror(err));
}

/// Closes a file descriptor when it goes out of scope.
class fd_guard {
public:
  explicit fd_guard(int fd) : fd_(fd) {
    // nop
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  /// Closes now and returns close's result (0 or -1 with errno).
  int close() {
    auto rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

private:
  int fd_;
};

/// Returns the absolute, normal form of `dir`, with no trailing slash.
caf::expected<fs::path> export_root(const fs::path& dir) {
  std::error_code ec;
  auto root = fs::absolute(dir, ec).lexically_normal();
  if (ec)
    return io_error(
      "cannot resolve export directory " + dir.string(), ec.value());
  if (!root.has_filename() && root.has_relative_path())
    root = root.parent_path();
  return root;
}

/// Makes sure `dir` exists and is empty.
caf::expected<void> prepare_dir(const fs::path& dir) {
  std::error_code ec;
  auto st = fs::status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return io_error(
      "cannot inspect export directory " + dir.string(), ec.value());
  if (st.type() == fs::file_type::not_found) {
    if (fs::create_directories(dir, ec); ec)
      return io_error(
        "cannot create export directory " + dir.string(), ec.value());
    return caf::unit;
  }
  if (!fs::is_directory(st))
    return make_error(error::invalid_arguments,
      "export directory " + dir.string() + " exists and is not a directory");
  auto it = fs::directory_iterator{dir, ec};
  if (ec)
    return io_error("cannot read export directory " + dir.string(), ec.value());
  if (it != fs::directory_iterator{})
    return make_error(error::invalid_arguments,
      "export directory " + dir.string() + " is not empty: export into an "
        + "absent or empty directory");
  return caf::unit;
}

/// Returns where the file at namespace `path` goes below `root`; refuses a
/// path that would land anywhere else.
caf::expected<fs::path> target_of(
  const fs::path& root, const std::string& path) {
  auto target = (root / fs::path{path}.relative_path()).lexically_normal();
  auto inside = target.lexically_relative(root);
  if (inside.empty() || inside == "." || inside.is_absolute()
      || *inside.begin() == "..")
    return make_error(error::store_failure,
      "file " + quote_fs_path(path) + " in the store would be exported to "
        + target.string() + ", outside " + root.string() + ": refused");
  return target;
}

/// Writes `bytes` to the new file `file` (which must not exist).
caf::expected<void> write_new_file(
  const fs::path& file, const std::string& bytes) {
  std::error_code ec;
  if (fs::create_directories(file.parent_path(), ec); ec)
    return io_error(
      "cannot create directory " + file.parent_path().string(), ec.value());
  auto fd = ::open(
    file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error("cannot create " + file.string(), errno);
  fd_guard guard{fd};
  for (size_t done = 0; done < bytes.size();) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return io_error("cannot write " + file.string(), errno);
    done += static_cast<size_t>(n);
  }
  if (guard.close() != 0)
    return io_error("cannot write " + file.string(), errno);
  return caf::unit;
}

} // namespace

caf::expected<size_t> export_tree(
  const file_tree& tree, const fs::path& out_dir) {
  auto root = export_root(out_dir);
  if (!root)
    return root.error();
  auto files = tree.all();
  if (!files)
    return files.error();
  // Check every target first, so that a bad path leaves nothing behind.
  std::vector<fs::path> targets;
  targets.reserve(files->size());
  for (const auto& file : *files) {
    auto target = target_of(*root, file.first);
    if (!target)
      return target.error();
    targets.push_back(std::move(*target));
  }
  if (auto ok = prepare_dir(*root); !ok)
    return ok.error();
  for (size_t i = 0; i < files->size(); ++i) {
    const auto& [path, v] = (*files)[i];
    auto bytes = tree.get(path, v.version);
    if (!bytes)
      return bytes.error();
    if (auto ok = write_new_file(targets[i], *bytes); !ok)
      return ok.error();
  }
  return files->size();
}

} // namespace eat::persistence
