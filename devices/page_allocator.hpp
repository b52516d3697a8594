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
#include <utility>
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

/// Blocks of at least this many bytes are mapped for themselves (mmap),
/// come with their pages mapped, and are kept for reuse when freed.
constexpr std::size_t kept_block_min_bytes = std::size_t{1} << 20;

/// At most this many freed blocks are kept; beyond, the oldest is unmapped.
constexpr std::size_t max_kept_blocks = 16;

/// Returns a block of `bytes` (an allocation_bytes figure of at least
/// kept_block_min_bytes), page-aligned, or nullptr where memory runs out.
/// A kept block of that size if there is one; else the smallest kept
/// block up to half as large again, as it is (kept whole when freed); else a
/// kept block resized to it (mremap: the largest smaller one, else the
/// smallest), whose pages stay mapped, the new ones populated; else a new
/// mapping, populated. Pages once written stay with the process: on a
/// VM whose host takes freed pages back, the first write to 238 MB took
/// 0.65 s (populated first, ~0.5 s), re-writing it 8 ms; the correctness
/// phase's buffers become the timing phase's, and one workload's the
/// next's (docs/performance.md). Where a mapping fails, every kept block is
/// unmapped and it is tried again: kept memory never stands in the way of
/// an allocation. Thread-safe.
void* take_block(std::size_t bytes);

/// Keeps `p`, a block of `bytes` from take_block, for later take_block
/// calls.
void keep_block(void* p, std::size_t bytes);

/// Maps the pages of [p, p + bytes) at once, writable, their contents
/// untouched (one madvise(MADV_POPULATE_WRITE); `p` page-aligned): on this
/// project's VM, writing 1.2 GB of new pages took 3.4-3.9 s with a fault
/// per page, 2.2-2.7 s populated first. Kernels older than Linux 5.14
/// refuse the advice; the pages then fault in as they are first written.
void populate_pages(void* p, std::size_t bytes);

/// The number of blocks kept now (for tests).
std::size_t kept_blocks();

/// An allocator that aligns every allocation of a page or more to a page
/// (rounded up to whole pages), and smaller ones to a cache line: a
/// workload of tiny buffers rotates through many sets, which would
/// otherwise take a page per buffer. Blocks of a MiB or more come from
/// take_block and go back to it (keep_block).
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
      if (bytes >= kept_block_min_bytes)
        populate_pages(shared, bytes);
      return static_cast<T*>(shared);
    }
    void* p
      = bytes >= kept_block_min_bytes
          ? take_block(bytes)
          : std::aligned_alloc(allocation_alignment(n * sizeof(T)), bytes);
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

  /// Default-initialises: a new page_vector's trivial elements hold
  /// whatever the block held, and whoever needs zeros writes them at once
  /// (typed_buffer). The element-by-element value-initialisation
  /// std::vector does through an allocator ran at 0.8 GB/s, against 20 for
  /// the memset.
  template<class U>
  void construct(U* p) noexcept(noexcept(U())) {
    ::new (static_cast<void*>(p)) U;
  }

  template<class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
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

/// A vector whose elements start at a page boundary; `page_vector<T>(n)`
/// leaves trivial elements uninitialised (page_allocator::construct).
template <class T>
using page_vector = std::vector<T, page_allocator<T>>;

} // namespace eat::devices
