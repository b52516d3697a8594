// process_switch_bench: what a machine charges for running a kernel in a
// process of its own (`kernel_processes`, docs/harness.md) on large
// working sets, without the harness. A driver pinned to one core keeps an
// input and an output of MIB MiB each in a memory file, rewrites both
// between calls (as the runner hashes inputs and poisons outputs), and has
// a loop over them (out = in * a + b) run either by itself, by one of W
// threads, or by one of W processes taking turns, all on that core. The
// work and the memory are the same; only the number of address spaces
// differs. Prints the median call time of each, the median over rounds
// that take the configurations in turn (to spread the machine's drift),
// and processes / threads: about 1 where switching address spaces costs
// nothing more than switching threads.
//
//   cmake --build BUILD_DIR --target process_switch_bench
//   BUILD_DIR/bench/process_switch_bench [--mib N] [--calls N] [--rounds N]
//
// docs/performance.md ("process_switch_bench") records its figures.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr int max_workers = 16;

/// One go/done word pair a worker, in the shared memory.
struct control {
  std::atomic<uint32_t> go[max_workers];
  std::atomic<uint32_t> done[max_workers];
};

struct region {
  control* ctl = nullptr;
  float* in = nullptr;
  float* out = nullptr;
  size_t count = 0;
};

void futex_wake(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, word, FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t seen) {
  ::syscall(SYS_futex, word, FUTEX_WAIT, seen, nullptr, nullptr, 0);
}

void pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  ::sched_setaffinity(0, sizeof(set), &set);
}

/// The last core this process may run on.
int last_core() {
  cpu_set_t set;
  CPU_ZERO(&set);
  ::sched_getaffinity(0, sizeof(set), &set);
  for (int c = CPU_SETSIZE - 1; c >= 0; --c)
    if (CPU_ISSET(c, &set))
      return c;
  return 0;
}

__attribute__((noinline)) void kernel(const region& r) {
  for (size_t i = 0; i < r.count; ++i)
    r.out[i] = r.in[i] * 1.0001f + 0.5f;
}

/// A worker's loop: one kernel call each time `go` moves, until ~0.
void serve(const region& r, int w) {
  uint32_t seen = 0;
  for (;;) {
    while (r.ctl->go[w].load() == seen)
      futex_wait(&r.ctl->go[w], seen);
    seen = r.ctl->go[w].load();
    if (seen == ~0u)
      return;
    kernel(r);
    r.ctl->done[w].store(seen);
    futex_wake(&r.ctl->done[w]);
  }
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
    std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? 0 : xs[xs.size() / 2];
}

/// Median call time with `workers` threads or processes (0: the driver
/// calls the kernel itself), over `calls` calls.
double measure(region& r, int workers, bool processes, int calls) {
  for (int w = 0; w < max_workers; ++w) {
    r.ctl->go[w].store(0);
    r.ctl->done[w].store(0);
  }
  std::vector<std::thread> threads;
  std::vector<pid_t> children;
  for (int w = 0; w < workers; ++w) {
    if (!processes) {
      threads.emplace_back(serve, r, w);
      continue;
    }
    auto pid = ::fork();
    if (pid == 0) {
      serve(r, w);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  std::vector<double> times;
  for (int k = 0; k < calls; ++k) {
    // The runner's work between calls: read the inputs, poison the outputs.
    volatile float sum = 0;
    for (size_t i = 0; i < r.count; i += 16)
      sum = sum + r.in[i];
    std::memset(r.out, 0xff, r.count * sizeof(float));
    auto t0 = now_ms();
    if (workers == 0) {
      kernel(r);
    } else {
      int w = k % workers;
      auto seq = static_cast<uint32_t>(k / workers + 1);
      r.ctl->go[w].store(seq);
      futex_wake(&r.ctl->go[w]);
      for (uint32_t d; (d = r.ctl->done[w].load()) != seq;)
        futex_wait(&r.ctl->done[w], d);
    }
    times.push_back(now_ms() - t0);
  }
  for (int w = 0; w < workers; ++w) {
    r.ctl->go[w].store(~0u);
    futex_wake(&r.ctl->go[w]);
  }
  for (auto& t : threads)
    t.join();
  for (auto pid : children)
    ::waitpid(pid, nullptr, 0);
  return median(times);
}

long option(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0)
      return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

} // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: process_switch_bench [--mib N] [--calls N] "
                  "[--rounds N]\n  (defaults 237, 16, 5; see the source's "
                  "header)\n");
      return 0;
    }
  auto mib = option(argc, argv, "--mib", 237);
  auto calls = static_cast<int>(option(argc, argv, "--calls", 16));
  auto rounds = static_cast<int>(option(argc, argv, "--rounds", 5));
  if (mib < 1 || mib > 4096 || calls < 1 || rounds < 1) {
    std::fprintf(stderr, "process_switch_bench: --mib 1 - 4096, --calls and "
                         "--rounds at least 1\n");
    return 2;
  }
  auto core = last_core();
  pin(core);
  region r;
  r.count = static_cast<size_t>(mib) << 18; // floats in mib MiB
  auto bytes = 4096 + 2 * r.count * sizeof(float);
  int fd = ::memfd_create("process-switch-bench", 0);
  void* base = MAP_FAILED;
  if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(bytes)) == 0)
    base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    std::perror("process_switch_bench: memory file");
    return 1;
  }
  r.ctl = static_cast<control*>(base);
  r.in = reinterpret_cast<float*>(static_cast<char*>(base) + 4096);
  r.out = r.in + r.count;
  for (size_t i = 0; i < r.count; ++i)
    r.in[i] = static_cast<float>(i % 1000) * 0.5f;
  const int counts[] = {2, 4, 8};
  std::vector<double> alone;
  std::vector<std::vector<double>> by_threads(3);
  std::vector<std::vector<double>> by_processes(3);
  std::printf("process_switch_bench: %ld MiB in + %ld MiB out, core %d, "
              "%d calls a configuration, %d rounds\n",
    mib, mib, core, calls, rounds);
  std::fflush(stdout);
  for (int round = 0; round < rounds; ++round) {
    alone.push_back(measure(r, 0, false, calls));
    for (int i = 0; i < 3; ++i) {
      by_threads[i].push_back(measure(r, counts[i], false, calls));
      by_processes[i].push_back(measure(r, counts[i], true, calls));
    }
    std::fprintf(stderr, "  round %d of %d done\n", round + 1, rounds);
  }
  std::printf("  %-28s %10.2f ms\n", "in the driver", median(alone));
  for (int i = 0; i < 3; ++i) {
    auto t = median(by_threads[i]);
    auto p = median(by_processes[i]);
    char label[64];
    std::snprintf(
      label, sizeof(label), "%d threads / %d processes", counts[i], counts[i]);
    std::printf("  %-28s %10.2f / %.2f ms   processes / threads %.2fx\n", label,
      t, p, t > 0 ? p / t : 0);
  }
  return 0;
}
