#include "devices/shared_arena.hpp"

#include <cerrno>
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
  void* p = ::mmap(
    nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
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
