#include "devices/page_allocator.hpp"

#include <deque>
#include <mutex>

namespace eat::devices {

namespace {

struct kept_block {
  void* p;
  std::size_t bytes;
};

struct kept_state {
  std::mutex mutex;
  std::deque<kept_block> blocks;
};

/// Never destroyed: a buffer freed by another static's destructor at exit
/// still finds it.
kept_state& state() {
  static auto* s = new kept_state;
  return *s;
}

} // namespace

void* reuse_block(std::size_t bytes) {
  auto& s = state();
  std::lock_guard guard{s.mutex};
  for (auto i = s.blocks.begin(); i != s.blocks.end(); ++i) {
    if (i->bytes == bytes) {
      auto* p = i->p;
      s.blocks.erase(i);
      return p;
    }
  }
  for (const auto& b : s.blocks)
    std::free(b.p);
  s.blocks.clear();
  return nullptr;
}

void keep_block(void* p, std::size_t bytes) {
  auto& s = state();
  std::lock_guard guard{s.mutex};
  if (s.blocks.size() == max_kept_blocks) {
    std::free(s.blocks.front().p);
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
