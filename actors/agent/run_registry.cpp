#include "actors/agent/run_registry.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/sha256.hpp"

namespace eat {

namespace fs = std::filesystem;

namespace {

/// An entry's name: the first 32 hex digits of the SHA-256 of `run_dir`.
std::string entry_name(const fs::path& run_dir) {
  return devices::sha256_hex(run_dir.string()).substr(0, 32);
}

/// The path `entry` holds (its whole text but the last newline: a folder's
/// name may hold one), or "" when it holds no absolute path.
fs::path entry_path(const fs::path& entry) {
  std::ifstream in{entry, std::ios::binary};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  if (text.empty() || text[0] != '/' || text.find('\0') != std::string::npos)
    return {};
  return fs::path{text};
}

/// Whether `path` is an absolute path whose folder is gone (no error: a
/// folder eat may not look into is kept).
bool gone(const fs::path& path) {
  std::error_code ec;
  return !path.empty() && !fs::exists(path, ec) && !ec;
}

/// The entries of `registry` (not the files being written, whose names
/// start with '.'); none where it cannot be read. Never throws: a folder
/// that fails midway gives the entries read so far.
std::vector<fs::path> entries_of(const fs::path& registry) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it{registry, ec}, end; !ec && it != end;
       it.increment(ec))
    if (it->path().filename().string()[0] != '.')
      out.push_back(it->path());
  return out;
}

} // namespace

std::optional<fs::path> run_registry_dir() {
  // The home of the user eat runs as, whatever HOME says: a run under
  // another HOME (sudo -H, cron) entered its folder where the others'
  // CLIs never looked (red team).
  std::vector<char> buf(16384);
  passwd entry;
  passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buf.data(), buf.size(), &found) == 0
      && found != nullptr && found->pw_dir != nullptr && found->pw_dir[0] == '/'
      && found->pw_dir[1] != '\0')
    return fs::path{found->pw_dir} / ".local" / "state" / "eat" / "runs";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/' || home[1] == '\0')
    return std::nullopt;
  return fs::path{home} / ".local" / "state" / "eat" / "runs";
}

std::string register_run(const fs::path& registry, const fs::path& run_dir) {
  std::error_code ec;
  fs::create_directories(registry, ec);
  if (ec)
    return "cannot make " + registry.string() + ": " + ec.message();
  ::chmod(registry.c_str(), 0700);
  for (const auto& e : entries_of(registry))
    if (gone(entry_path(e)))
      fs::remove(e, ec);
  auto entry = registry / entry_name(run_dir);
  auto part
    = registry / ("." + entry_name(run_dir) + "." + std::to_string(::getpid()));
  {
    std::ofstream out{part, std::ios::binary | std::ios::trunc};
    out << run_dir.string() << "\n";
    if (!out.flush())
      return "cannot write " + part.string();
  }
  if (::rename(part.c_str(), entry.c_str()) != 0) {
    auto why = "cannot write " + entry.string() + ": " + std::strerror(errno);
    fs::remove(part, ec);
    return why;
  }
  return {};
}

std::vector<fs::path> registered_runs(const fs::path& registry) {
  std::vector<fs::path> out;
  for (const auto& e : entries_of(registry)) {
    std::error_code ec;
    auto path = entry_path(e);
    if (!path.empty() && fs::is_directory(path, ec))
      out.push_back(std::move(path));
  }
  return out;
}

} // namespace eat
