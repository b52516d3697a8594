#include "devices/shared_arena.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "devices/page_allocator.hpp"

namespace eat::devices {

namespace {

shared_arena* installed = nullptr;

std::size_t round_up(std::size_t x, std::size_t to) {
  return (x + to - 1) / to * to;
}

/// Where the arena goes when it can: on x86-64 Linux a fresh process puts
/// its program and heap near 0x5555'0000'0000 and its libraries, mappings
/// and stack below the top (0x7fff'...), each at a random offset, so that
/// an arena placed among the runner's own mappings was now and then where
/// a kernel's process, a fresh exec of the runner, had already put one of
/// its own and could not map the arena at the runner's address (exit
/// status 3, once in a harness_bench run of ~130 evaluations). Slots of
/// `size` from this address on are tried in turn; where none is free (or
/// the address space is smaller), anywhere.
constexpr uintptr_t preferred_base = 0x2000'0000'0000;
constexpr int preferred_slots = 16;

void* map_arena_file(int fd, std::size_t size) {
  constexpr int prot = PROT_READ | PROT_WRITE;
  for (int slot = 0; slot < preferred_slots; ++slot) {
    auto* at = reinterpret_cast<void*>(preferred_base + slot * size);
    void* p = ::mmap(
      at, size, prot, MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE, fd, 0);
    if (p == at)
      return p;
    if (p != MAP_FAILED) // a kernel that takes the flag for a hint
      ::munmap(p, size);
  }
  return ::mmap(nullptr, size, prot, MAP_SHARED | MAP_NORESERVE, fd, 0);
}

} // namespace

shared_arena::shared_arena(std::size_t bytes) {
  size_ = round_up(bytes == 0 ? page_bytes : bytes, page_bytes);
  fd_ = ::memfd_create("eat-arena", MFD_CLOEXEC);
  if (fd_ < 0) {
    error_ = std::string{"memfd_create: "} + std::strerror(errno);
    return;
  }
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    error_ = std::string{"ftruncate: "} + std::strerror(errno);
    return;
  }
  void* p = map_arena_file(fd_, size_);
  if (p == MAP_FAILED) {
    error_ = "mmap of " + std::to_string(size_ >> 20)
             + " MiB: " + std::strerror(errno);
    return;
  }
  base_ = p;
  free_.emplace(0, size_);
}

shared_arena::~shared_arena() {
  if (installed == this)
    installed = nullptr;
  if (base_ != nullptr)
    ::munmap(base_, size_);
  if (fd_ >= 0)
    ::close(fd_);
}

void* shared_arena::allocate(std::size_t bytes, std::size_t align) {
  bytes = round_up(bytes == 0 ? 1 : bytes, line_bytes);
  for (auto i = free_.begin(); i != free_.end(); ++i) {
    auto [offset, length] = *i;
    auto start = round_up(offset, align);
    if (start + bytes > offset + length)
      continue;
    free_.erase(i);
    if (start > offset)
      free_.emplace(offset, start - offset);
    if (start + bytes < offset + length)
      free_.emplace(start + bytes, offset + length - start - bytes);
    return static_cast<char*>(base_) + start;
  }
  return nullptr;
}

void shared_arena::release(void* p, std::size_t bytes) {
  bytes = round_up(bytes == 0 ? 1 : bytes, line_bytes);
  auto offset = static_cast<std::size_t>(
    static_cast<char*>(p) - static_cast<char*>(base_));
  auto [at, inserted] = free_.emplace(offset, bytes);
  if (!inserted)
    return;
  if (auto next = std::next(at);
      next != free_.end() && at->first + at->second == next->first) {
    at->second += next->second;
    free_.erase(next);
  }
  if (at != free_.begin()) {
    auto prev = std::prev(at);
    if (prev->first + prev->second == at->first) {
      prev->second += at->second;
      free_.erase(at);
    }
  }
}

bool shared_arena::owns(const void* p) const {
  auto* c = static_cast<const char*>(p);
  auto* b = static_cast<const char*>(base_);
  return base_ != nullptr && c >= b && c < b + size_;
}

std::size_t shared_arena::free_bytes() const {
  std::size_t n = 0;
  for (const auto& [offset, length] : free_)
    n += length;
  return n;
}

std::size_t shared_arena::used_bytes() const {
  if (!free_.empty()) {
    auto last = std::prev(free_.end());
    if (last->first + last->second == size_)
      return last->first;
  }
  return size_;
}

void shared_arena::install() {
  installed = this;
}

shared_arena* installed_arena() {
  return installed;
}

} // namespace eat::devices
