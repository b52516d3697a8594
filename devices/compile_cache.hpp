// The compile cache's bounds (devices/compiler.hpp): how large one object
// may be, and how large the cache may grow before the objects used least
// recently go. A candidate with a 1 GiB static array compiled in 15 s and
// stayed cached for good: about 80 such submissions filled the disk, and
// then the run's store (red team).
//
// Plain functions over a directory; several threads and processes may
// trim one cache at once (a file already gone is skipped).

#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>

namespace eat::devices {

struct cache_limits {
  /// The largest compiled object kept; a larger one is the source's
  /// compile error.
  uint64_t object_bytes = uint64_t{64} << 20;
  /// The cache's size beyond which the least recently used objects go.
  uint64_t cache_bytes = uint64_t{4} << 30;
  /// Objects used more recently than this stay, whatever the size (one
  /// compiled ahead may wait that long in a device's queue).
  std::chrono::seconds min_age = std::chrono::hours{1};
};

/// Marks the object at `path` as used now (its modification time), so
/// that trimming keeps it longer.
void mark_used(const std::filesystem::path& path);

/// Removes the least recently used `.so` objects of `dir`, with their
/// `.log`, until the objects take at most `limits.cache_bytes`, never one
/// used within `limits.min_age`. Returns how many it removed.
size_t trim_cache(const std::filesystem::path& dir, const cache_limits& limits);

} // namespace eat::devices
