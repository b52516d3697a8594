#include "devices/compile_cache.hpp"

#include <algorithm>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>

namespace eat::devices {

namespace fs = std::filesystem;

void mark_used(const fs::path& path) {
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // now
}

size_t trim_cache(const fs::path& dir, const cache_limits& limits) {
  struct object {
    fs::file_time_type used;
    uint64_t bytes;
    fs::path path;
  };
  std::vector<object> objects;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator i{dir, ec}, end; !ec && i != end;
       i.increment(ec)) {
    if (i->path().extension() != ".so")
      continue;
    std::error_code stat_ec;
    auto bytes = i->file_size(stat_ec);
    auto used = i->last_write_time(stat_ec);
    if (stat_ec)
      continue;
    objects.push_back({used, bytes, i->path()});
    total += bytes;
  }
  if (total <= limits.cache_bytes)
    return 0;
  std::sort(
    objects.begin(), objects.end(), [](const object& a, const object& b) {
      return a.used < b.used;
    });
  auto recent = fs::file_time_type::clock::now() - limits.min_age;
  size_t removed = 0;
  for (const auto& o : objects) {
    if (total <= limits.cache_bytes || o.used >= recent)
      break;
    std::error_code rm_ec;
    if (fs::remove(o.path, rm_ec)) {
      removed += 1;
      fs::remove(fs::path{o.path}.replace_extension(".log"), rm_ec);
    }
    total -= o.bytes;
  }
  return removed;
}

} // namespace eat::devices
