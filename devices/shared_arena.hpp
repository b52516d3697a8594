// Memory that a runner shares with the processes that run its kernels
// (devices/runner/kernel_host.hpp): one memory file mapped at the same
// address in both, from which page_allocator takes the harness's buffers
// while the arena is installed, so that a pointer to an input or output
// means the same bytes in the runner and in a kernel's process.
//
// Used by the runner's only thread; install() makes it the process's arena
// until the arena is destroyed.

#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace eat::devices {

class shared_arena {
public:
  /// Maps a memory file of `bytes` (rounded up to whole pages); on failure
  /// error() says why and base() is null.
  explicit shared_arena(std::size_t bytes);

  shared_arena(const shared_arena&) = delete;
  shared_arena& operator=(const shared_arena&) = delete;

  /// Unmaps the file (and uninstalls the arena if installed).
  ~shared_arena();

  const std::string& error() const {
    return error_;
  }

  void* base() const {
    return base_;
  }

  std::size_t size() const {
    return size_;
  }

  /// The memory file, which a kernel's process maps at base().
  int fd() const {
    return fd_;
  }

  /// A block of `bytes` (rounded up to a cache line) aligned to `align` (a
  /// power of two up to a page), or nullptr when no free block is large
  /// enough.
  void* allocate(std::size_t bytes, std::size_t align);

  /// Returns a block that allocate() gave for `bytes`.
  void release(void* p, std::size_t bytes);

  bool owns(const void* p) const;

  /// Free bytes in all (for tests).
  std::size_t free_bytes() const;

  /// Bytes from base() to the end of the highest block given out: the span
  /// a kernel's process maps before timing (kernel_host::map_arena).
  std::size_t used_bytes() const;

  /// Makes this the arena page_allocator takes from (installed_arena()).
  void install();

private:
  std::string error_;
  void* base_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
  /// Free blocks: offset to size, adjacent ones merged.
  std::map<std::size_t, std::size_t> free_;
};

/// The installed arena, or nullptr.
shared_arena* installed_arena();

} // namespace eat::devices
