// Page-aligned storage for the harness's buffers (typed_buffer inputs,
// guarded_output outputs): every buffer of a page or more starts at the
// same offset within a page whatever state the allocator is in, so the
// baseline and the candidate see one layout of their inputs and outputs. A kernel's time moves by up to
// ~15 % with where its buffers fall relative to each other (4 KiB aliasing
// between stores and loads): docs/performance.md, "harness_bench".

#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include "devices/shared_arena.hpp"

namespace eat::devices {

constexpr std::size_t page_bytes = 4096;

/// A cache line, the alignment of buffers smaller than a page.
constexpr std::size_t line_bytes = 64;

/// The alignment page_allocator gives a block of `bytes`, and the bytes it
/// asks for: a page or more is page-aligned and rounded up to whole pages,
/// less is aligned and rounded to a cache line (at least one).
inline std::size_t allocation_alignment(std::size_t bytes) {
  return bytes < page_bytes ? line_bytes : page_bytes;
}

inline std::size_t allocation_bytes(std::size_t bytes) {
  auto align = allocation_alignment(bytes);
  return (bytes == 0 ? align : (bytes + align - 1) / align * align);
}

/// Freed blocks of at least this many bytes are kept for reuse.
constexpr std::size_t kept_block_min_bytes = std::size_t{1} << 20;

/// At most this many freed blocks are kept; beyond, the oldest is freed.
constexpr std::size_t max_kept_blocks = 16;

/// Returns a kept block of exactly `bytes` (an allocation_bytes figure), or
/// nullptr. A miss frees every kept block first, so that kept memory never
/// adds to what a new allocation needs. The harness frees the correctness
/// phase's buffers just before the timing phase asks for buffers of the
/// same sizes: reused, their pages are already mapped. On a VM whose host
/// takes freed pages back, a first touch of 238 MB took 0.65 s (and
/// re-touching 8 ms). Thread-safe.
void* reuse_block(std::size_t bytes);

/// Keeps `p`, a block of `bytes` from std::aligned_alloc, for reuse_block.
void keep_block(void* p, std::size_t bytes);

/// The number of blocks kept now (for tests).
std::size_t kept_blocks();

/// An allocator that aligns every allocation of a page or more to a page
/// (rounded up to whole pages), and smaller ones to a cache line: a
/// workload of tiny buffers rotates through many sets, which would
/// otherwise take a page per buffer. Blocks of a MiB or more are kept when
/// freed and handed to the next allocation of the same size (reuse_block).
/// While a shared_arena is installed, blocks come from it instead.
template <class T>
struct page_allocator {
  using value_type = T;

  page_allocator() = default;

  template <class U>
  page_allocator(const page_allocator<U>&) noexcept {
    // nop
  }

  T* allocate(std::size_t n) {
    auto bytes = allocation_bytes(n * sizeof(T));
    if (auto* arena = installed_arena()) {
      void* shared = arena->allocate(bytes, allocation_alignment(bytes));
      if (shared == nullptr)
        throw std::bad_alloc{};
      return static_cast<T*>(shared);
    }
    void* p = bytes >= kept_block_min_bytes ? reuse_block(bytes) : nullptr;
    if (p == nullptr)
      p = std::aligned_alloc(allocation_alignment(n * sizeof(T)), bytes);
    if (p == nullptr)
      throw std::bad_alloc{};
    return static_cast<T*>(p);
  }

  void deallocate(T* p, std::size_t n) noexcept {
    auto bytes = allocation_bytes(n * sizeof(T));
    if (auto* arena = installed_arena(); arena != nullptr && arena->owns(p)) {
      arena->release(p, bytes);
      return;
    }
    if (bytes >= kept_block_min_bytes)
      keep_block(p, bytes);
    else
      std::free(p);
  }

  template <class U>
  bool operator==(const page_allocator<U>&) const noexcept {
    return true;
  }

  template <class U>
  bool operator!=(const page_allocator<U>&) const noexcept {
    return false;
  }
};

/// A vector whose elements start at a page boundary.
template <class T>
using page_vector = std::vector<T, page_allocator<T>>;

} // namespace eat::devices
