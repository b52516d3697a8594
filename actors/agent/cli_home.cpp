#include "actors/agent/cli_home.hpp"

#include <cerrno>
#include <cstring>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"

namespace eat {

namespace fs = std::filesystem;

namespace {

/// "name/" or "name" as a path relative to a home: "name".
fs::path entry_path(const std::string& entry) {
  auto text = entry;
  while (text.size() > 1 && text.back() == '/')
    text.pop_back();
  return fs::path{text}.lexically_normal();
}

/// Copies `from` to `to`: folders with what they hold, links as links,
/// regular files; other files are left out.
void copy_tree(const fs::path& from, const fs::path& to, std::error_code& ec) {
  auto st = fs::symlink_status(from, ec);
  if (ec)
    return;
  if (fs::is_symlink(st))
    return fs::copy_symlink(from, to, ec);
  if (fs::is_regular_file(st)) {
    fs::copy_file(from, to, ec);
    return;
  }
  if (!fs::is_directory(st))
    return;
  fs::create_directory(to, from, ec);
  for (fs::directory_iterator it{from, ec}, end; !ec && it != end;
       it.increment(ec))
    copy_tree(it->path(), to / it->path().filename(), ec);
}

/// A descriptor closed when it goes.
struct fd_holder {
  int fd = -1;
  explicit fd_holder(int f) : fd(f) {}
  fd_holder(const fd_holder&) = delete;
  fd_holder& operator=(const fd_holder&) = delete;
  ~fd_holder() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Opens the folder `parts` (all but the last) of `rel` under `root`
/// without following a link anywhere; -1 if it cannot.
int open_parent_beneath(const fs::path& root, const fs::path& rel) {
  int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  auto parent = rel.parent_path();
  for (const auto& part : parent) {
    if (fd < 0)
      return -1;
    int next = ::openat(
      fd, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    ::close(fd);
    fd = next;
  }
  return fd;
}

/// A file's contents and when it was last modified.
struct file_state {
  std::string bytes;
  timespec modified{};
};

enum class read_result { ok, missing, refused };

/// Reads the regular file `name` in the folder `dir` without following a
/// link, if it holds at most max_credentials_bytes.
read_result read_at(int dir, const std::string& name, file_state& out) {
  fd_holder f{::openat(
    dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0)
    return errno == ENOENT ? read_result::missing : read_result::refused;
  struct stat st;
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)
      || static_cast<uint64_t>(st.st_size) > max_credentials_bytes)
    return read_result::refused;
  out.modified = st.st_mtim;
  out.bytes.assign(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.bytes.size()) {
    auto n = ::read(f.fd, out.bytes.data() + got, out.bytes.size() - got);
    if (n <= 0)
      return read_result::refused;
    got += static_cast<size_t>(n);
  }
  return read_result::ok;
}

/// Replaces `name` in the folder `dir` with `bytes` (mode `mode`): written
/// beside, then renamed, so that a reader never sees half of it and a
/// link in its place is replaced rather than followed. "" or why not.
std::string write_at(
  int dir, const std::string& name, const std::string& bytes, mode_t mode) {
  auto temp = "." + name + ".eat-" + std::to_string(::getpid()) + "-"
              + std::to_string(std::random_device{}());
  fd_holder f{::openat(dir, temp.c_str(),
    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)};
  if (f.fd < 0)
    return std::string{"cannot create a file beside it: "}
           + std::strerror(errno);
  size_t put = 0;
  while (put < bytes.size()) {
    auto n = ::write(f.fd, bytes.data() + put, bytes.size() - put);
    if (n <= 0) {
      auto why = std::string{"cannot write it: "} + std::strerror(errno);
      ::unlinkat(dir, temp.c_str(), 0);
      return why;
    }
    put += static_cast<size_t>(n);
  }
  ::fchmod(f.fd, mode);
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) {
    auto why
      = std::string{"cannot rename it into place: "} + std::strerror(errno);
    ::unlinkat(dir, temp.c_str(), 0);
    return why;
  }
  return {};
}

bool newer(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

/// Keeps one credentials file in step; "" or what went wrong.
std::string sync_one(
  const fs::path& home, const fs::path& dir, const fs::path& rel) {
  auto name = rel.filename().string();
  // eat's home is the operator's: its links are followed.
  std::error_code ec;
  auto real = fs::canonical(home / rel, ec);
  fd_holder real_dir{
    ec ? -1
       : ::open(real.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
  fd_holder team_dir{open_parent_beneath(dir, rel)};
  file_state mine;
  file_state theirs;
  auto real_read = real_dir.fd < 0
                     ? read_result::missing
                     : read_at(real_dir.fd, real.filename().string(), mine);
  if (real_read == read_result::refused)
    return (home / rel).string() + ": not a regular file of at most 1 MiB";
  if (team_dir.fd < 0)
    return {};
  auto team_read = read_at(team_dir.fd, name, theirs);
  if (team_read == read_result::refused)
    return (dir / rel).string()
           + ": not a regular file of at most 1 MiB (a link?); left as it is";
  if (real_read == read_result::missing)
    return {};
  if (team_read == read_result::ok && theirs.bytes == mine.bytes)
    return {};
  std::string why;
  if (team_read == read_result::ok && newer(theirs.modified, mine.modified)) {
    struct stat st;
    auto mode = ::fstatat(real_dir.fd, real.filename().c_str(), &st, 0) == 0
                  ? st.st_mode & 07777
                  : 0600;
    why = write_at(real_dir.fd, real.filename().string(), theirs.bytes, mode);
    return why.empty() ? why : real.string() + ": " + why;
  }
  why = write_at(team_dir.fd, name, mine.bytes, 0600);
  return why.empty() ? why : (dir / rel).string() + ": " + why;
}

} // namespace

fs::path team_home_dir(const fs::path& work_dir, const std::string& team) {
  return work_dir / ".homes" / team;
}

caf::expected<void> make_team_home(const fs::path& home,
  const std::vector<std::string>& home_paths, const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)))
    return {};
  fs::create_directories(dir.parent_path(), ec);
  fs::permissions(dir.parent_path(), fs::perms::owner_all, ec);
  auto temp = fs::path{dir.string() + ".making-" + std::to_string(::getpid())
                       + "-" + std::to_string(std::random_device{}())};
  auto fail = [&](const std::string& what) {
    fs::remove_all(temp, ec);
    return make_error(error::io_failure,
      "cannot make the team's home " + dir.string() + ": " + what);
  };
  if (::mkdir(temp.c_str(), 0700) != 0)
    return fail(std::string{"mkdir: "} + std::strerror(errno));
  for (const auto& entry : home_paths) {
    auto rel = entry_path(entry);
    // The entry itself is followed where it is a link (~/.claude into a
    // dotfiles folder): the copy must not lead back to eat's own.
    auto from = fs::canonical(home / rel, ec);
    if (ec) { // missing: nothing to copy
      ec.clear();
      continue;
    }
    fs::create_directories((temp / rel).parent_path(), ec);
    if (!ec) {
      if (fs::is_directory(from, ec)) {
        fs::create_directory(temp / rel, from, ec);
        for (fs::directory_iterator it{from, ec}, end; !ec && it != end;
             it.increment(ec))
          copy_tree(it->path(), temp / rel / it->path().filename(), ec);
      } else if (fs::is_regular_file(from, ec)) {
        fs::copy_file(from, temp / rel, ec);
      }
    }
    if (ec)
      return fail("copying " + (home / rel).string() + ": " + ec.message());
  }
  if (::rename(temp.c_str(), dir.c_str()) != 0) {
    auto err = errno;
    fs::remove_all(temp, ec);
    // Another agent of the team made it first.
    if ((err == EEXIST || err == ENOTEMPTY)
        && fs::is_directory(fs::symlink_status(dir, ec)))
      return {};
    return make_error(error::io_failure, "cannot make the team's home "
                                           + dir.string() + ": "
                                           + std::strerror(err));
  }
  return {};
}

std::vector<cli_mount> home_mounts(const fs::path& home,
  const std::vector<std::string>& home_paths, const fs::path& dir) {
  std::vector<cli_mount> out;
  std::error_code ec;
  for (const auto& entry : home_paths) {
    auto rel = entry_path(entry);
    auto real = fs::canonical(home / rel, ec);
    if (ec || !fs::exists(fs::symlink_status(dir / rel, ec))) {
      ec.clear();
      continue;
    }
    out.push_back({real.string(), true, false, (dir / rel).string()});
  }
  return out;
}

std::string sync_credentials(const fs::path& home, const fs::path& dir,
  const std::vector<std::string>& credentials) {
  std::string out;
  for (const auto& c : credentials)
    if (auto why = sync_one(home, dir, entry_path(c)); !why.empty())
      out += why + "\n";
  return out;
}

} // namespace eat
