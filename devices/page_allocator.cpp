#include "devices/page_allocator.hpp"

#include <deque>
#include <map>
#include <mutex>

#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE // headers older than Linux 5.14
#  define MADV_POPULATE_WRITE 23
#endif

namespace eat::devices {

namespace {

struct kept_block {
  void* p;
  std::size_t bytes;
};

struct kept_state {
  std::mutex mutex;
  std::deque<kept_block> blocks;
  /// Blocks handed out larger than asked for: their whole size.
  std::map<void*, std::size_t> lent;
};

/// Never destroyed: a buffer freed by another static's destructor at exit
/// still finds it.
kept_state& state() {
  static auto* s = new kept_state;
  return *s;
}

void* map_block(std::size_t bytes) {
  void* p = ::mmap(
    nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  populate_pages(p, bytes);
  return p;
}

/// The kept block take_block hands out as it is for `bytes`: the smallest
/// that is large enough and at most half as large again.
std::deque<kept_block>::iterator lendable(
  std::deque<kept_block>& blocks, std::size_t bytes) {
  auto best = blocks.end();
  for (auto i = blocks.begin(); i != blocks.end(); ++i)
    if (i->bytes >= bytes && i->bytes / 3 * 2 <= bytes
        && (best == blocks.end() || i->bytes < best->bytes))
      best = i;
  return best;
}

/// The kept block take_block resizes for `bytes`: the largest smaller
/// one, else the smallest.
std::deque<kept_block>::iterator resizable(
  std::deque<kept_block>& blocks, std::size_t bytes) {
  auto best = blocks.end();
  for (auto i = blocks.begin(); i != blocks.end(); ++i) {
    if (best == blocks.end())
      best = i;
    else if (i->bytes < bytes)
      best = best->bytes >= bytes || i->bytes > best->bytes ? i : best;
    else if (best->bytes >= bytes && i->bytes < best->bytes)
      best = i;
  }
  return best;
}

/// Resizes `block` to `bytes`, its pages kept, or unmaps it and returns
/// nullptr.
void* resize(const kept_block& block, std::size_t bytes) {
  void* p = ::mremap(block.p, block.bytes, bytes, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) {
    ::munmap(block.p, block.bytes);
    return nullptr;
  }
  if (bytes > block.bytes)
    populate_pages(static_cast<char*>(p) + block.bytes, bytes - block.bytes);
  return p;
}

} // namespace

void populate_pages(void* p, std::size_t bytes) {
  // Advice only: where the kernel refuses it, first writes fault as usual.
  (void)::madvise(p, bytes, MADV_POPULATE_WRITE);
}

void* take_block(std::size_t bytes) {
  auto& s = state();
  std::lock_guard guard{s.mutex};
  for (auto i = s.blocks.begin(); i != s.blocks.end(); ++i) {
    if (i->bytes == bytes) {
      auto* p = i->p;
      s.blocks.erase(i);
      return p;
    }
  }
  if (auto i = lendable(s.blocks, bytes); i != s.blocks.end()) {
    auto* p = i->p;
    s.lent[p] = i->bytes;
    s.blocks.erase(i);
    return p;
  }
  if (auto i = resizable(s.blocks, bytes); i != s.blocks.end()) {
    auto block = *i;
    s.blocks.erase(i);
    if (auto* p = resize(block, bytes))
      return p;
  }
  if (auto* p = map_block(bytes))
    return p;
  for (const auto& b : s.blocks)
    ::munmap(b.p, b.bytes);
  s.blocks.clear();
  return map_block(bytes);
}

void keep_block(void* p, std::size_t bytes) {
  auto& s = state();
  std::lock_guard guard{s.mutex};
  if (auto lent = s.lent.find(p); lent != s.lent.end()) {
    bytes = lent->second;
    s.lent.erase(lent);
  }
  if (s.blocks.size() == max_kept_blocks) {
    ::munmap(s.blocks.front().p, s.blocks.front().bytes);
    s.blocks.pop_front();
  }
  s.blocks.push_back({p, bytes});
}

std::size_t kept_blocks() {
  auto& s = state();
  std::lock_guard guard{s.mutex};
  return s.blocks.size();
}

} // namespace eat::devices
