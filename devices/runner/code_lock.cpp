#include "devices/runner/code_lock.hpp"

#include <cerrno>
#include <cstring>

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace eat::devices {

namespace {

struct search {
  uintptr_t fn;
  std::vector<std::pair<uintptr_t, size_t>> found;
};

/// The page-aligned executable PT_LOAD segments of `info`.
std::vector<std::pair<uintptr_t, size_t>> executable_segments(
  const dl_phdr_info* info) {
  auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::vector<std::pair<uintptr_t, size_t>> result;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0)
      continue;
    auto begin = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
    auto end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + page - 1)
               & ~(page - 1);
    result.emplace_back(begin, end - begin);
  }
  return result;
}

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<search*>(data);
  auto segments = executable_segments(info);
  for (const auto& [start, length] : segments)
    if (s->fn >= start && s->fn < start + length) {
      s->found = std::move(segments);
      return 1;
    }
  return 0;
}

} // namespace

code_lock code_lock::of(void* fn) {
  search s{reinterpret_cast<uintptr_t>(fn), {}};
  ::dl_iterate_phdr(visit, &s);
  code_lock result;
  for (const auto& [start, length] : s.found)
    result.segments_.push_back({start, length});
  return result;
}

std::string code_lock::lock() const {
  return protect(PROT_NONE);
}

std::string code_lock::unlock() const {
  return protect(PROT_READ | PROT_EXEC);
}

std::string code_lock::protect(int prot) const {
  for (const auto& s : segments_)
    if (::mprotect(reinterpret_cast<void*>(s.start), s.length, prot) != 0)
      return std::string{"mprotect: "} + std::strerror(errno);
  return {};
}

} // namespace eat::devices
