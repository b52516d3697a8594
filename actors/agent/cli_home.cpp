#include "actors/agent/cli_home.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
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

/// Whether a CLI run as eat's user without capabilities could read the
/// file `st` describes in place (and search it, a folder). A copy it may
/// write, it could chmod: a file of mode 0000, or one of another user's,
/// copied as it is, would be open to it (red team).
bool readable_in_place(const struct stat& st) {
  const mode_t need = S_ISDIR(st.st_mode) ? 05 : 04;
  mode_t bits = st.st_mode & 07;
  if (st.st_uid == ::geteuid()) {
    bits = (st.st_mode >> 6) & 07;
  } else {
    gid_t groups[256];
    int n = ::getgroups(256, groups);
    bool member = st.st_gid == ::getegid();
    for (int i = 0; i < n && !member; ++i)
      member = groups[i] == st.st_gid;
    if (member)
      bits = (st.st_mode >> 3) & 07;
  }
  return (bits & need) == need;
}

std::error_code last_error() {
  return {errno, std::generic_category()};
}

/// Whether `path` has an access ACL, which the mode bits do not show and
/// a copy does not keep: a file its ACL closed to eat's user was readable
/// in the copy (red team). Not followed where it is a link.
bool has_access_acl(const fs::path& path) {
  return ::lgetxattr(path.c_str(), "system.posix_acl_access", nullptr, 0) >= 0;
}

/// Copies `from` (described by `st`) to `to`: folders with what they hold,
/// links inside them as links, regular files, each with its owner; what
/// the CLI could not read in place or has an access ACL, and files of
/// other kinds, are left out.
void copy_tree(const fs::path& from, const struct stat& st, const fs::path& to,
  std::error_code& ec) {
  if (S_ISLNK(st.st_mode)) {
    fs::copy_symlink(from, to, ec);
  } else if (!readable_in_place(st) || has_access_acl(from)) {
    return;
  } else if (S_ISREG(st.st_mode)) {
    fs::copy_file(from, to, ec);
  } else if (S_ISDIR(st.st_mode)) {
    fs::create_directory(to, from, ec);
    for (fs::directory_iterator it{from, ec}, end; !ec && it != end;
         it.increment(ec)) {
      struct stat inner;
      if (::lstat(it->path().c_str(), &inner) != 0)
        ec = last_error();
      else
        copy_tree(it->path(), inner, to / it->path().filename(), ec);
    }
  } else {
    return;
  }
  if (!ec && (st.st_uid != ::geteuid() || st.st_gid != ::getegid()))
    ::lchown(to.c_str(), st.st_uid, st.st_gid);
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

enum class read_result { ok, missing, refused };

/// Reads the regular file `name` in the folder `dir` without following a
/// link, if it holds at most max_credentials_bytes.
read_result read_at(int dir, const std::string& name, std::string& out) {
  fd_holder f{::openat(
    dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0)
    return errno == ENOENT ? read_result::missing : read_result::refused;
  struct stat st;
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)
      || static_cast<uint64_t>(st.st_size) > max_credentials_bytes)
    return read_result::refused;
  out.assign(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    auto n = ::read(f.fd, out.data() + got, out.size() - got);
    if (n <= 0)
      return read_result::refused;
    got += static_cast<size_t>(n);
  }
  return read_result::ok;
}

/// Who owns a file written in place of another, and its mode.
struct file_owner {
  uid_t uid = ::geteuid();
  gid_t gid = ::getegid();
  mode_t mode = 0600;
};

/// Replaces `name` in the folder `dir` with `bytes`, owned and moded as
/// `owner` says: written beside, then renamed, so that a reader never sees
/// half of it and a link in its place is replaced rather than followed.
/// "" or why not.
std::string write_at(int dir, const std::string& name, const std::string& bytes,
  const file_owner& owner) {
  auto temp = "." + name + ".eat-" + std::to_string(::getpid()) + "-"
              + std::to_string(std::random_device{}());
  fd_holder f{::openat(dir, temp.c_str(),
    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
  if (f.fd < 0)
    return std::string{"cannot create a file beside it: "}
           + std::strerror(errno);
  auto fail = [&](const char* what) {
    auto why = what + std::string{": "} + std::strerror(errno);
    ::unlinkat(dir, temp.c_str(), 0);
    return why;
  };
  for (size_t put = 0; put < bytes.size();) {
    auto n = ::write(f.fd, bytes.data() + put, bytes.size() - put);
    if (n <= 0)
      return fail("cannot write it");
    put += static_cast<size_t>(n);
  }
  // The operator's CLI must still be able to read its login (a red team's
  // root eat left a user's file root's).
  if ((owner.uid != ::geteuid() || owner.gid != ::getegid())
      && ::fchown(f.fd, owner.uid, owner.gid) != 0)
    return fail("cannot give it its owner");
  if (::fchmod(f.fd, owner.mode) != 0)
    return fail("cannot set its mode");
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0)
    return fail("cannot rename it into place");
  return {};
}

/// The file where eat keeps what it last gave team home `dir` of
/// credentials file `rel`, beside the home, where no CLI looks.
fs::path given_file(const fs::path& dir, const fs::path& rel) {
  auto name = rel.string();
  for (auto& c : name)
    c = c == '/' ? '%' : c;
  return fs::path{dir.string() + ".given"} / name;
}

/// One credentials file: eat's copy (`real`, its links followed: the home
/// is the operator's) and the team's (found without following links).
struct login_pair {
  fs::path real;
  fs::path team;
  fd_holder real_dir;
  fd_holder team_dir;
  std::string name;

  login_pair(const fs::path& home, const fs::path& dir, const fs::path& rel)
    : team(dir / rel), real_dir(-1), team_dir(open_parent_beneath(dir, rel)),
      name(rel.filename().string()) {
    std::error_code ec;
    real = fs::canonical(home / rel, ec);
    if (!ec)
      real_dir.fd
        = ::open(real.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    else
      real = home / rel;
  }

  read_result read_real(std::string& out) const {
    return real_dir.fd < 0
             ? read_result::missing
             : read_at(real_dir.fd, real.filename().string(), out);
  }

  read_result read_team(std::string& out) const {
    return team_dir.fd < 0 ? read_result::missing
                           : read_at(team_dir.fd, name, out);
  }
};

std::string refused(const fs::path& path) {
  return path.string()
         + ": not a regular file of at most 1 MiB (a link?); left as it is";
}

/// Gives the team eat's copy of one credentials file; "" or what failed.
std::string give_one(
  const fs::path& home, const fs::path& dir, const fs::path& rel) {
  login_pair p{home, dir, rel};
  std::string mine;
  auto got = p.read_real(mine);
  if (got == read_result::refused)
    return refused(p.real);
  if (got == read_result::missing || p.team_dir.fd < 0)
    return {};
  std::string theirs;
  auto had = p.read_team(theirs);
  if (had == read_result::refused)
    return refused(p.team);
  if (had == read_result::missing || theirs != mine)
    if (auto why = write_at(p.team_dir.fd, p.name, mine, {}); !why.empty())
      return p.team.string() + ": " + why;
  std::error_code ec;
  auto given = given_file(dir, rel);
  fs::create_directories(given.parent_path(), ec);
  std::ofstream{given, std::ios::binary | std::ios::trunc} << mine;
  return {};
}

/// Takes back what the team's CLI changed of one credentials file since
/// give_one; "" or what failed.
std::string take_one(
  const fs::path& home, const fs::path& dir, const fs::path& rel) {
  login_pair p{home, dir, rel};
  std::string theirs;
  auto had = p.read_team(theirs);
  if (had == read_result::refused)
    return refused(p.team);
  std::ifstream given_in{given_file(dir, rel), std::ios::binary};
  if (had == read_result::missing || !given_in || p.real_dir.fd < 0)
    return {};
  std::string given{std::istreambuf_iterator<char>{given_in}, {}};
  if (theirs == given)
    return {};
  struct stat st;
  if (::fstatat(p.real_dir.fd, p.real.filename().c_str(), &st, 0) != 0)
    return {};
  if (auto why = write_at(p.real_dir.fd, p.real.filename().string(), theirs,
        {st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 07777)});
      !why.empty())
    return p.real.string() + ": " + why;
  std::ofstream{given_file(dir, rel), std::ios::binary | std::ios::trunc}
    << theirs;
  return {};
}

/// Runs `one` on each credentials file; its refusals, one per line.
std::string for_each_credential(
  std::string (*one)(const fs::path&, const fs::path&, const fs::path&),
  const fs::path& home, const fs::path& dir,
  const std::vector<std::string>& credentials) {
  std::string out;
  for (const auto& c : credentials)
    if (auto why = one(home, dir, entry_path(c)); !why.empty())
      out += why + "\n";
  return out;
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
    struct stat st;
    if (!ec && ::stat(from.c_str(), &st) != 0)
      ec = last_error();
    if (!ec)
      copy_tree(from, st, temp / rel, ec);
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

std::vector<cli_mount> hidden_home_mounts(
  const fs::path& home, const std::vector<std::string>& hidden) {
  std::vector<cli_mount> out;
  for (const auto& entry : hidden) {
    std::error_code ec;
    auto real = fs::canonical(home / entry_path(entry), ec);
    if (!ec)
      out.push_back({real.string(), false, true});
  }
  return out;
}

std::string give_credentials(const fs::path& home, const fs::path& dir,
  const std::vector<std::string>& credentials) {
  return for_each_credential(give_one, home, dir, credentials);
}

std::string take_credentials(const fs::path& home, const fs::path& dir,
  const std::vector<std::string>& credentials) {
  return for_each_credential(take_one, home, dir, credentials);
}

} // namespace eat
