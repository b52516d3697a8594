// Specification of the hidden-work checks of kernel processes
// (devices/runner/kernel_host.hpp, docs/harness.md "Kernel processes"):
// the runner reads each kernel's process's CPU clock around every call of
// either kernel, so that CPU time a process used outside its own calls is
// counted, and that used while the baseline's calls ran (slowing them) is
// told apart. Each end-to-end case evaluates a candidate through the built
// eat-runner.

#include <regex>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "devices/runner/harness.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Evaluates `source` in kernel processes on a fresh device, on one
/// workload whose naive calls take ~0.5 ms, timing at least `samples`.
eval_result evaluate_hosted(const std::string& source, uint32_t samples = 10) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.kernel_processes = true;
  opts.timing.min_samples = samples;
  opts.timing.max_time_s = samples * 0.02;
  auto dev = make_device(opts);
  auto task = sgemm_task({gemm_workload(96, 96, 96)});
  return dev->evaluate(task, make_candidate("c", source), 11);
}

/// The microseconds of CPU time the method line says the candidate's
/// process used between its calls and, of those, while the baseline's
/// calls ran; -1 each where it says none.
std::pair<long, long> idle_us(const std::string& method) {
  std::smatch m;
  static const std::regex figures{
    "process's CPU time between its calls (\\d+) us \\((\\d+) us while "
    "the baseline's ran\\)"};
  if (!std::regex_search(method, m, figures))
    return {-1, -1};
  return {std::stol(m[1]), std::stol(m[2])};
}

/// The helpers of a candidate (reaches_the_baseline) that looks for the
/// baseline's control block in the memory its process shares with the
/// runner: from the page before the mapping that holds its inputs on (made
/// readable if it can be), and in the first page of that mapping's file,
/// mapped over the mapping's last page (remap_file_pages: a red-team
/// candidate reached a control block hidden from it so), for the head of
/// host_control (kernel_host.hpp, mirrored here) of a process that is not
/// in a call while this one is. Found, it could take the baseline's
/// wake-ups and delay its calls without using CPU time (a fake 8x); here
/// it poisons its own output so that the evaluation shows it.
const char* control_block_search = R"(#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include <sys/mman.h>

struct head {
  std::atomic<uint32_t> go, done, parked;
  uint32_t op;
};

static void mapping_of(const void* inside, uintptr_t& start, uintptr_t& end) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr)
    return;
  char line[512];
  unsigned long from = 0, to = 0;
  auto at = reinterpret_cast<uintptr_t>(inside);
  while (start == 0 && std::fgets(line, sizeof line, maps))
    if (std::sscanf(line, "%lx-%lx", &from, &to) == 2 && from <= at && at < to) {
      start = from;
      end = to;
    }
  std::fclose(maps);
}

static bool is_block(const void* page) {
  auto* h = static_cast<const head*>(page);
  return h->op >= 1 && h->op <= 3 && h->go.load() == h->done.load();
}

static bool baseline_block_found(const void* inside) {
  uintptr_t start = 0, end = 0;
  mapping_of(inside, start, end);
  if (start == 0)
    return false;
  for (int page = -1; page < 64; ++page) {
    auto* p = reinterpret_cast<void*>(start + 4096 * page);
    if (page < 0 && mprotect(p, 4096, PROT_READ | PROT_WRITE) != 0)
      continue;
    if (is_block(p))
      return true;
  }
  auto* last = reinterpret_cast<void*>(end - 4096);
  return remap_file_pages(last, 4096, 0, 0, 0) == 0 && is_block(last);
})";

/// The candidate: the naive loop, its first call searching.
std::string reaches_the_baseline() {
  return naive_kernel(R"(static bool searched = false;
  bool found = false;
  if (!searched) {
    searched = true;
    found = baseline_block_found(a);
  })",
    "if (found) c[0] = NAN;", control_block_search);
}

/// A candidate whose thread starts spinning once timing is under way (the
/// correctness phase and the warm-up take 7 calls here), through the
/// baseline's calls as through its own.
std::string spins_once_timed() {
  return naive_kernel(R"(static int calls = 0;
  if (++calls == 11)
    std::thread([] { for (volatile unsigned long x = 0;; ++x) {} }).detach();)",
    "", "#include <thread>\n");
}

} // namespace

TEST_CASE("an honest candidate's process uses no CPU time between its calls, "
          "even when its calls are long") {
  // Eight times the naive loop: calls of ~4 ms, after which the scheduler
  // held the process back from its futex wait until the baseline's call
  // ran (tens of microseconds in a third of the gaps on the development
  // VM) before the runner slept until it was back (kernel_host::settle).
  auto slow = naive_kernel("for (volatile int rep = 0; rep < 8; ++rep) {", "}");
  auto result = evaluate_hosted(slow, 60);
  INFO(result.detail << "\n" << result.method);
  REQUIRE(result.status == eval_status::passed);
  auto [idle, during_baseline] = idle_us(result.method);
  CHECK(idle >= 0);
  CHECK(idle < 20);
  CHECK(during_baseline >= 0);
  CHECK(during_baseline <= idle);
}

TEST_CASE("a candidate whose thread works between its calls is rejected for "
          "hidden work") {
  auto spins = naive_kernel(R"(static std::atomic<bool> started{false};
  if (!started.exchange(true))
    std::thread([] { for (volatile unsigned long x = 0;; ++x) {} }).detach();)",
    "", "#include <atomic>\n#include <thread>\n");
  auto result = evaluate_hosted(spins);
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "hidden work: the candidate's process used"));
}

TEST_CASE("a candidate whose thread works through the baseline's calls is "
          "rejected for the CPU time it took there") {
  auto result = evaluate_hosted(spins_once_timed());
  INFO(result.detail << " " << result.geomean_speedup);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "while the baseline's"));
}

TEST_CASE("the baseline's control block is out of the candidate's process's "
          "reach") {
  // With the block in the arena, the search found it in the arena's first
  // page (before 2026-12-05 hidden by inaccessible memory, then through
  // remap_file_pages) and the candidate was incorrect.
  auto result = evaluate_hosted(reaches_the_baseline());
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}

TEST_CASE("the hidden-work rule puts one gap of up to 10 ms down to the "
          "machine, and not two") {
  // 800 calls of ~0.13 ms each, the baseline waiting at 0.3 us a call.
  const idle_figures baseline{240'000, 20'000, 800, 104'000'000};
  idle_figures candidate{400'000, 20'000, 800, 104'000'000};
  // Allowed: 1 ms + 2 x 0.3 us x 800 + 1 % of 104 ms = 2.52 ms.
  CHECK_FALSE(worked_between_calls(candidate, baseline));
  // A vCPU taken away for 9 ms in one gap, charged to the process.
  candidate.idle_cpu_ns += 9'000'000;
  candidate.largest_idle_ns = 9'000'000;
  CHECK_FALSE(worked_between_calls(candidate, baseline));
  // Two such gaps: only the largest is excused.
  candidate.idle_cpu_ns += 9'000'000;
  CHECK(worked_between_calls(candidate, baseline));
  // One gap of 30 ms: 10 ms of it is excused, not all.
  candidate = {400'000 + 30'000'000, 30'000'000, 800, 104'000'000};
  CHECK(worked_between_calls(candidate, baseline));
  // Work spread over every gap, 15 us each: 12 ms in all.
  candidate = {800 * 15'000, 15'000, 800, 104'000'000};
  CHECK(worked_between_calls(candidate, baseline));
}

TEST_CASE("a candidate cannot raise its allowance between calls by working "
          "longer in its own calls") {
  // A red-team candidate spent 5 s in each of its untimed check calls (180
  // s in all: 1.8 s allowed between calls), then precomputed 80 % of each
  // timed call's rows between calls: passed 4.12x, re-verified 4.00x.
  const idle_figures baseline{30'000, 2'000, 200, 1'700'000'000};
  // 100 timed calls of 17 ms, 13.6 ms of each done between calls.
  const idle_figures precomputes{1'360'000'000, 14'000'000, 200, 340'000'000};
  CHECK(worked_between_calls(precomputes, baseline));
  auto inflated = precomputes;
  inflated.call_cpu_ns += 180'000'000'000;
  CHECK(worked_between_calls(inflated, baseline));
  // An honest candidate slower than the baseline keeps the baseline's
  // allowance: 1 ms + 1 % of 1.7 s.
  CHECK_FALSE(
    worked_between_calls({17'000'000, 100'000, 200, 3'400'000'000}, baseline));
  CHECK(worked_between_calls(
    {19'000'000 + 10'000'000, 10'000'000, 200, 3'400'000'000}, baseline));
}

TEST_CASE("work while the baseline's calls run is held to 0.5 % of their "
          "time, less than the rule between calls allows") {
  // 800 calls of the baseline of 1 ms each.
  // 3 us in each: 2.4 ms, 0.3 % of the baseline's time. Allowed: 0.1 ms
  // + 0.5 % of 800 ms = 4.1 ms.
  CHECK_FALSE(
    worked_during_baseline({2'400'000, 3'000, 800, 800'000'000, 800}));
  // 8 us in each: 6.4 ms, a 0.8 % slower baseline; between calls, with the
  // candidate's 800 calls of 1 ms, 1 ms + 1 % of 800 ms = 9 ms would pass.
  CHECK(worked_during_baseline({6'400'000, 8'000, 800, 800'000'000, 800}));
  CHECK_FALSE(worked_between_calls(
    {6'400'000, 8'000, 800, 800'000'000}, {0, 0, 800, 800'000'000}));
  // One call taken over for 5 ms (one sample of 800) is excused; 10 ms of
  // one of 30 ms is.
  CHECK_FALSE(
    worked_during_baseline({5'000'000, 5'000'000, 800, 800'000'000, 1}));
  CHECK(worked_during_baseline({30'000'000, 30'000'000, 800, 800'000'000, 1}));
}

namespace {

/// A candidate (after a red-team one) that marks its call done itself
/// after a sixth of its rows (its control block is in its process: the
/// memory file "eat-control"), yields the core so that the runner reads
/// its clock, and computes the rest while the runner waits for it to be
/// back to waiting; every third call computes everything and then sleeps
/// for longer than it took, which keeps its CPU time over all calls
/// within their wall time.
const char* ends_early = R"(#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace {
struct head {
  std::atomic<uint32_t> go, done, parked;
};
head* self = nullptr;
unsigned long calls = 0;

char maps[1 << 16];

// Without stdio's buffers (no allocation), and again at the next call
// should the map not have been read whole.
void find_self() {
  int fd = open("/proc/self/maps", O_RDONLY);
  if (fd < 0)
    return;
  size_t used = 0;
  for (ssize_t n; used + 1 < sizeof maps
       && (n = read(fd, maps + used, sizeof maps - 1 - used)) > 0;)
    used += static_cast<size_t>(n);
  close(fd);
  maps[used] = '\0';
  char* at = std::strstr(maps, "eat-control");
  if (at == nullptr)
    return;
  while (at > maps && at[-1] != '\n')
    --at;
  self = reinterpret_cast<head*>(std::strtoul(at, nullptr, 16));
}

void say_done() {
  auto seq = self->go.load();
  self->done.store(seq);
  syscall(SYS_futex, &self->done, FUTEX_WAKE, 1, nullptr, nullptr, 0);
  timespec nap{0, 200000};
  nanosleep(&nap, nullptr);
}
}

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  if (self == nullptr)
    find_self();
  auto start = std::chrono::steady_clock::now();
  bool early = self != nullptr && calls++ % 3 != 2;
  for (int64_t i = 0; i < m; ++i) {
    if (early && i == (m + 5) / 6)
      say_done();
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  }
  if (self != nullptr && !early) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - start).count() * 13 / 10;
    timespec rest{ns / 1000000000, ns % 1000000000};
    nanosleep(&rest, nullptr);
  }
}
)";

} // namespace

TEST_CASE("a candidate that marks its calls done before their work is "
          "rejected") {
  // Unchecked, its samples were a sixth of its calls: 5.3x for the
  // baseline's own loop (a red-team run), re-verified.
  auto result = evaluate_hosted(ends_early, 30);
  INFO(result.detail << " " << result.geomean_speedup);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "calls that end before their work"));
}

TEST_CASE("the early-end rule allows a call the baseline's way back to "
          "waiting, and a little more") {
  std::vector<double> baseline(101, 5'000);
  // An honest candidate: as the baseline's, or a little above.
  CHECK(early_end_text(baseline, baseline, 500'000).empty());
  CHECK(early_end_text(std::vector<double>(101, 20'000), baseline, 500'000)
          .empty());
  // Half of each call's work after its sample ended.
  auto why
    = early_end_text(std::vector<double>(101, 250'000), baseline, 250'000);
  CHECK(contains(why, "calls that end before their work"));
  CHECK(contains(why, "median 250 us"));
  // A few calls with a stall beyond their sample do not move the median.
  auto stalls = baseline;
  for (size_t i = 0; i < 20; ++i)
    stalls[i] = 3'000'000;
  CHECK(early_end_text(stalls, baseline, 500'000).empty());
  CHECK(early_end_text({}, baseline, 0).empty());
  // Calls that wait in their samples (a large set on the development VM:
  // the baseline's 4.8 ms under its 40 ms samples) allow nothing, and do
  // not make the candidate's honest calls look early.
  std::vector<double> waits(101, -4'848'000);
  CHECK(early_end_text(std::vector<double>(101, -39'000), waits, 40'155'000)
          .empty());
  CHECK_FALSE(
    early_end_text(std::vector<double>(101, 1'500'000), waits, 40'155'000)
      .empty());
}
