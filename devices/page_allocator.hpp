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

/// An allocator that aligns every allocation of a page or more to a page
/// (rounded up to whole pages), and smaller ones to a cache line: a
/// workload of tiny buffers rotates through many sets, which would
/// otherwise take a page per buffer.
template <class T>
struct page_allocator {
  using value_type = T;

  page_allocator() = default;

  template <class U>
  page_allocator(const page_allocator<U>&) noexcept {
    // nop
  }

  T* allocate(std::size_t n) {
    void* p = std::aligned_alloc(allocation_alignment(n * sizeof(T)),
      allocation_bytes(n * sizeof(T)));
    if (p == nullptr)
      throw std::bad_alloc{};
    return static_cast<T*>(p);
  }

  void deallocate(T* p, std::size_t) noexcept {
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
