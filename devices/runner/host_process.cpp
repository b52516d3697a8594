// The kernel's side of kernel_host.hpp: `eat-runner --kernel-host FD BASE
// SIZE CONTROL SO ENTRY`, started by the runner with only the arena's
// memory file (FD), its control block's (CONTROL) and the shared object's
// descriptor open.

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "devices/kind.hpp"
#include "devices/kinds/problem.hpp"
#include "devices/landlock.hpp"
#include "devices/runner/drop_root.hpp"
#include "devices/runner/entries.hpp"
#include "devices/runner/kernel_host.hpp"
#include "devices/runner/seccomp_filter.hpp"

namespace eat::devices {

namespace {

void post_done(host_control& c, uint32_t seq) {
  c.done.store(seq, std::memory_order_release);
  ::syscall(SYS_futex, &c.done, FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

/// Waits until `go` moves past `seen`; returns its new value.
uint32_t wait_go(host_control& c, uint32_t seen) {
  for (;;) {
    auto go = c.go.load(std::memory_order_acquire);
    if (go != seen)
      return go;
    c.parked.store(
      c.done.load(std::memory_order_relaxed), std::memory_order_release);
    ::syscall(SYS_futex, &c.go, FUTEX_WAIT, seen, nullptr, nullptr, 0);
  }
}

void set_error(host_control& c, host_control::failure_code failure,
  const std::string& text) {
  c.failure = failure;
  std::strncpy(c.error, text.c_str(), host_control::error_bytes - 1);
}

/// Maps the pages of [from, from + bytes) into this process's page tables
/// (kernel_host::map_arena) by reading a byte of each. On the development
/// VM (a 256^3 sgemm a call, on 80 sets of 768 KiB drawn by another
/// process) calls on sets never touched here took 2.06 ms against 0.71;
/// after madvise(MADV_POPULATE_WRITE) still 1.60 ms; after this read,
/// 0.72 ms, and writes to the outputs cost nothing more.
void map_pages(void* from, uint64_t bytes) {
  const auto* p = static_cast<const volatile char*>(from);
  for (uint64_t at = 0; at < bytes; at += page_bytes)
    (void)p[at];
}

/// Makes the calls the runner posts, for ever (the runner kills it).
[[noreturn]] void serve(host_control& c, void* fn) {
  // The runner's first call moves `go` from 0 (`done` is 1 once loaded).
  uint32_t seen = 0;
  const kind* k = nullptr;
  std::string kind_name;
  for (;;) {
    seen = wait_go(c, seen);
    if (c.op == host_control::call) {
      if (kind_name != c.kind) {
        kind_name = std::string{c.kind, ::strnlen(c.kind, sizeof(c.kind))};
        k = find_kind(kind_name);
      }
      if (k != nullptr)
        call_entry(*k, fn, c.input, c.inputs, c.output, c.dim);
    } else if (c.op == host_control::map) {
      map_pages(c.map_from, c.map_bytes);
    }
    post_done(c, seen);
  }
}

/// What a kernel's process may read: the system's files, its shared
/// object (one drop_root copied into memory needs no rule), its own /proc
/// entry, what OpenBLAS reads to learn the CPU, and /dev/urandom.
landlock_rules kernel_rules(const std::string& so) {
  landlock_rules rules{system_read_paths(), {}};
  if (so.rfind(code_fd_prefix, 0) != 0)
    rules.read.push_back(so);
  for (const char* path :
    {"/proc/self", "/proc/cpuinfo", "/sys/devices/system/cpu", "/dev/urandom"})
    rules.read.emplace_back(path);
  return rules;
}

} // namespace

int kernel_host_main(int argc, char** argv) {
  if (argc != 8)
    return 2;
  int fd = std::atoi(argv[2]);
  auto* base = reinterpret_cast<void*>(std::strtoull(argv[3], nullptr, 10));
  auto size = static_cast<size_t>(std::strtoull(argv[4], nullptr, 10));
  int control_fd = std::atoi(argv[5]);
  void* at = ::mmap(base, size, PROT_READ | PROT_WRITE,
    MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE, fd, 0);
  if (at != base)
    return host_cannot_map;
  ::close(fd);
  void* block = ::mmap(
    nullptr, control_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, control_fd, 0);
  if (block == MAP_FAILED)
    return host_cannot_map_control;
  ::close(control_fd);
  auto& c = *static_cast<host_control*>(block);
  ::prctl(PR_SET_DUMPABLE, 0);
  // The one file the kernel can write is its output (descriptors 1 and 2,
  // the runner's stdout.txt and stderr.txt): a red-team candidate wrote
  // 60 MiB there, dirty pages whose writeback would run while the
  // baseline's calls are timed. Beyond this it is killed by SIGXFSZ.
  rlimit output{kernel_output_bytes, kernel_output_bytes};
  ::setrlimit(RLIMIT_FSIZE, &output);
  // Files next (where the kernel has Landlock): what it may read is the
  // system's libraries and its own shared object, not the run's store,
  // the machine's secrets nor other processes' /proc; and from ABI 6 it
  // signals no process outside (the baseline, the runner).
  if (landlock_abi() > 0) {
    if (auto why = landlock_confine(kernel_rules(argv[6])); !why.empty()) {
      set_error(c, host_control::not_confined,
        "cannot be confined in its files: " + why);
      post_done(c, 1);
      return 0;
    }
  }
  if (auto why = confine_kernel_process(); !why.empty()) {
    set_error(c, host_control::not_confined,
      "cannot be confined in its process: " + why);
    post_done(c, 1);
    return 0;
  }
  steady_heap_for_kernels();
  auto entry = load_entry(argv[6], argv[7]);
  if (entry.fn == nullptr) {
    set_error(c, host_control::not_loaded, entry.error);
    post_done(c, 1);
    return 0;
  }
  post_done(c, 1);
  serve(c, entry.fn);
}

} // namespace eat::devices
