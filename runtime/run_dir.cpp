#include "runtime/run_dir.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "actors/protocol/error.hpp"
#include "devices/scratch_dir.hpp"

namespace fs = std::filesystem;

namespace eat {

namespace {

caf::error dir_error(const fs::path& dir, const std::string& what) {
  return make_error(
    error::invalid_run_dir, "run directory '" + dir.string() + "': " + what);
}

std::string timestamp() {
  auto now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
  return buf;
}

/// `root/name-time`, with -2, -3, ... appended when taken.
fs::path fresh_path(const fs::path& root, const std::string& name) {
  auto base = root / (name + "-" + timestamp());
  auto candidate = base;
  for (int i = 2; fs::exists(candidate); ++i)
    candidate = base.string() + "-" + std::to_string(i);
  return candidate;
}

} // namespace

run_dir::run_dir(fs::path path, int lock_fd)
  : path_(std::move(path)), lock_fd_(lock_fd) {}

run_dir::run_dir(run_dir&& other) noexcept
  : path_(std::move(other.path_)), lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

run_dir& run_dir::operator=(run_dir&& other) noexcept {
  std::swap(path_, other.path_);
  std::swap(lock_fd_, other.lock_fd_);
  return *this;
}

run_dir::~run_dir() {
  if (lock_fd_ >= 0)
    ::close(lock_fd_); // releases the flock
}

void run_dir::keep_private(const fs::path& dir) {
  // Kernels run as another user (`run_as`) when eat is root: they could
  // not open the run's files, but they could stat them, and learn the
  // sizes and times of its store and its agents' kernels.
  std::error_code ec;
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
}

caf::expected<int> run_dir::lock(const fs::path& dir) {
  auto file = dir / "run.lock";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return dir_error(
      dir, std::string{"cannot open run.lock: "} + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return dir_error(dir, "in use by another eat process (run.lock is held)");
  }
  auto pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0
      || ::pwrite(fd, pid.data(), pid.size(), 0)
           != static_cast<ssize_t>(pid.size())) {
    ::close(fd);
    return dir_error(dir, "cannot write run.lock");
  }
  return fd;
}

caf::expected<run_dir> run_dir::create(const fs::path& root,
  const std::string& name, const std::string& config_text,
  const fs::path& dir) {
  std::error_code ec;
  // Absolute, as agents are told where their workspaces are.
  auto path = fs::absolute(dir.empty() ? fresh_path(root, name) : dir, ec);
  if (!dir.empty() && fs::exists(path / "store", ec))
    return dir_error(path, "already holds a run; continue it with "
                           "'eat resume "
                             + path.string() + "'");
  // A run writes config.toml and clears what it takes for its own
  // leftovers under work/: never in a folder of someone else's.
  if (!dir.empty() && fs::exists(path, ec)
      && (!fs::is_directory(path, ec) || !fs::is_empty(path, ec)))
    return dir_error(path, fs::is_directory(path, ec)
                             ? "is not empty and holds no run; give a new or "
                               "an empty directory"
                             : "is not a directory");
  fs::create_directories(path / "store", ec);
  if (!ec)
    fs::create_directories(path / "work", ec);
  if (ec)
    return dir_error(path, "cannot create: " + ec.message());
  keep_private(path);
  auto fd = lock(path);
  if (!fd)
    return fd.error();
  std::ofstream out{path / "config.toml", std::ios::trunc};
  out << config_text;
  if (!out.flush())
    return dir_error(path, "cannot write config.toml");
  return run_dir{path, *fd};
}

caf::expected<run_dir> run_dir::open(const fs::path& given) {
  std::error_code ec;
  auto dir = fs::absolute(given, ec);
  if (!fs::is_directory(dir, ec))
    return dir_error(dir, "no such directory");
  if (!fs::is_directory(dir / "store", ec))
    return dir_error(dir, "not a run directory (it has no store/ folder)");
  keep_private(dir);
  auto fd = lock(dir);
  if (!fd)
    return fd.error();
  return run_dir{dir, *fd};
}

size_t run_dir::remove_leftovers() const {
  // work/{scratch,cache}, work/<backend>/{scratch,cache}: see
  // devices/cpu_device.cpp and devices/gpu_device.cpp.
  std::vector<fs::path> folders{work_dir()};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(work_dir(), ec))
    if (e.is_directory(ec))
      folders.push_back(e.path());
  size_t removed = 0;
  auto remove_in = [&](const fs::path& dir, bool builds_only) {
    std::vector<fs::path> doomed;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory(ec)
          && (!builds_only
              || e.path().filename().string().rfind("build.", 0) == 0))
        doomed.push_back(e.path());
    for (const auto& d : doomed)
      removed += devices::scratch_dir::remove_tree(d) ? 1 : 0;
  };
  for (const auto& f : folders) {
    remove_in(f / "scratch", false);
    remove_in(f / "cache", true);
  }
  return removed;
}

} // namespace eat
