// Specification of kernel processes (`[devices.cpu] kernel_processes`,
// devices/runner/kernel_host.hpp): the baseline and the candidate each run
// in a process of their own that shares only their buffers with the
// runner, so that a kernel cannot reach what decides its verdict. Each case
// evaluates a candidate end to end through the built eat-runner.

#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/runner/harness.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Evaluates `source` on a fresh device, in kernel processes or not, on
/// sgemm_task's small workloads, or with `timed`, on one whose calls take
/// ~0.5 ms, far above a call's round trip and its spread on a busy machine.
eval_result evaluate(const std::string& source, bool kernel_processes,
  double eval_timeout_s = 60, bool timed = false) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.kernel_processes = kernel_processes;
  opts.eval_timeout_s = eval_timeout_s;
  auto dev = make_device(opts);
  auto task = timed ? sgemm_task({gemm_workload(96, 96, 96)}) : sgemm_task();
  return dev->evaluate(task, make_candidate("c", source), 11);
}

/// evaluate() on the workload of ~0.5 ms calls.
eval_result evaluate_timed(const std::string& source, bool kernel_processes) {
  return evaluate(source, kernel_processes, 60, true);
}

/// Evaluates `source` in kernel processes on sgemm workload `w`, timing at
/// least `min_rounds` rounds (up to 30 s).
eval_result evaluate_rounds(
  const std::string& source, const workload& w, uint32_t min_rounds) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.kernel_processes = true;
  opts.timing.min_samples = min_rounds;
  opts.timing.max_time_s = 30;
  opts.timing.min_time_s = 0;
  auto dev = make_device(opts);
  return dev->evaluate(sgemm_task({w}), make_candidate("c", source), 11);
}

/// A candidate whose first call finds the baseline's eat_gemm in the
/// process (another loaded object defining it) and overwrites its first
/// bytes with a jump to a copy of the naive loop that runs three times:
/// the baseline gets three times slower, the candidate looks 3x faster.
const char* patches_the_baseline = R"(#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

static void naive(const float* a, const float* b, float* c, int64_t m,
                  int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
}

static void slow(const float* a, const float* b, float* c, int64_t m,
                 int64_t n, int64_t k) {
  for (int r = 0; r < 3; ++r)
    naive(a, b, c, m, n, k);
}

extern "C" void eat_gemm(const float*, const float*, float*, int64_t,
                         int64_t, int64_t);

static int find_other(dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0')
    return 0;
  void* h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
  if (h == nullptr)
    return 0;
  void* f = dlsym(h, "eat_gemm");
  if (f == nullptr || f == reinterpret_cast<void*>(&eat_gemm))
    return 0;
  auto page = reinterpret_cast<uintptr_t>(f) & ~uintptr_t{4095};
  if (mprotect(reinterpret_cast<void*>(page), 8192,
               PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
    return 0;
  unsigned char jump[12] = {0x48, 0xb8};
  auto target = reinterpret_cast<uintptr_t>(&slow);
  std::memcpy(jump + 2, &target, 8);
  jump[10] = 0xff;
  jump[11] = 0xe0;
  std::memcpy(f, jump, sizeof(jump));
  return 0;
}

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  static bool patched = false;
  if (!patched) {
    patched = true;
    dl_iterate_phdr(find_other, nullptr);
  }
  naive(a, b, c, m, n, k);
})";

/// A candidate that looks, in the 128 KiB before its output, for the
/// baseline's output on the same inputs (recognised by three elements it
/// computes itself) and copies it; it computes the product when it finds
/// none. Writing a page's first byte to a pipe tells it where it may read.
const char* copies_the_baseline = R"(#include <cmath>
#include <cstdint>
#include <cstring>
#include <unistd.h>

static float dot(const float* a, const float* b, int64_t i, int64_t j,
                 int64_t n, int64_t k) {
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    sum += a[i * k + p] * b[p * n + j];
  return sum;
}

static bool near(float x, float y) {
  return std::fabs(x - y) <= 1e-4f * std::fabs(y) + 1e-4f;
}

static bool readable(const void* page) {
  static int probe[2] = {-1, -1};
  if (probe[0] < 0 && pipe(probe) != 0)
    return false;
  char byte;
  if (write(probe[1], page, 1) != 1)
    return false;
  return read(probe[0], &byte, 1) == 1;
}

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  float c00 = dot(a, b, 0, 0, n, k), c01 = dot(a, b, 0, 1, n, k);
  float c10 = dot(a, b, 1, 0, n, k);
  const float* p = c - 1;
  for (int back = 1; back < 32768; ++back, --p) {
    auto at = reinterpret_cast<uintptr_t>(p);
    if (at % 4096 == 4092 && !readable(reinterpret_cast<void*>(at - 4092)))
      break;
    if (back >= m * n && near(p[0], c00) && near(p[1], c01)
        && near(p[n], c10)) {
      std::memcpy(c, p, sizeof(float) * m * n);
      return;
    }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] = dot(a, b, i, j, n, k);
})";

/// A candidate that looks, in the first 16 MiB of the mapping that holds
/// its output (the arena; its bounds from /proc/self/maps), for the answer
/// to its call: the reference's output (fp64) or the baseline's (floats),
/// each recognised by three elements it computes itself, and copies it.
/// Where it finds none it computes the product, one element wrong: so
/// it passes the checks only by copying. Writing a page's first byte to a
/// pipe tells it where it may read.
const char* copies_the_answer = R"(#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unistd.h>

static double dot(const float* a, const float* b, int64_t i, int64_t j,
                  int64_t n, int64_t k) {
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    sum += a[i * k + p] * b[p * n + j];
  return sum;
}

static bool near(double x, double y) {
  return std::fabs(x - y) <= 1e-4 * std::fabs(y) + 1e-4;
}

static bool page_readable(uintptr_t page) {
  static int probe[2] = {-1, -1};
  if (probe[0] < 0 && pipe(probe) != 0)
    return false;
  char byte;
  if (write(probe[1], reinterpret_cast<void*>(page), 1) != 1)
    return false;
  return read(probe[0], &byte, 1) == 1;
}

// The mapping that holds `p`, as [lo, hi).
static bool mapping_of(const void* p, uintptr_t* lo, uintptr_t* hi) {
  auto at = reinterpret_cast<uintptr_t>(p);
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr)
    return false;
  char line[512];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, maps) != nullptr)
    found = std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR, lo, hi) == 2
            && *lo <= at && at < *hi;
  std::fclose(maps);
  return found;
}

template <class T>
static bool find_answer(uintptr_t lo, uintptr_t hi, float* c, int64_t m,
                        int64_t n, double c00, double c01, double c10) {
  const uintptr_t bytes = sizeof(T) * m * n;
  uintptr_t readable_end = lo;
  for (uintptr_t at = lo; at + bytes <= hi; at += sizeof(T)) {
    while (readable_end < at + bytes) {
      if (!page_readable(readable_end)) {
        at = readable_end + 4096 - sizeof(T);  // past the page
        readable_end += 4096;
        break;
      }
      readable_end += 4096;
    }
    if (readable_end < at + bytes)
      continue;
    const T* x = reinterpret_cast<const T*>(at);
    if (near(x[0], c00) && near(x[1], c01) && near(x[n], c10)) {
      for (int64_t i = 0; i < m * n; ++i)
        c[i] = static_cast<float>(x[i]);
      return true;
    }
  }
  return false;
}

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  double c00 = dot(a, b, 0, 0, n, k), c01 = dot(a, b, 0, 1, n, k);
  double c10 = dot(a, b, 1, 0, n, k);
  uintptr_t lo = 0, hi = 0;
  if (mapping_of(c, &lo, &hi)) {
    if (hi - lo > (16 << 20))
      hi = lo + (16 << 20);
    // The reference's fp64 answer first: copied twice, it repeats bit
    // for bit.
    if (find_answer<double>(lo, hi, c, m, n, c00, c01, c10)
        || find_answer<float>(lo, hi, c, m, n, c00, c01, c10))
      return;
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] = dot(a, b, i, j, n, k);
  c[0] += 1.0f;
})";

/// A naive sgemm that knows the evaluation's seed (11, as evaluate_rounds
/// passes it) and how the harness derived each timing round's inputs from
/// it until 2026-12-06: an rng seeded from the workload's seed, one output
/// a round for the redraw (and one for the order), each input filled by
/// its hash. In its first call it lists A[0] and A[1] for the first
/// 20,000 outputs; a call whose A it finds there poisons its output, so
/// that the prediction shows as an incorrect timed call. (A red-team
/// candidate without the seed cracked it from one round's inputs.)
const char* predicts_the_inputs = R"(#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  return mix64(mix64(seed) ^ mix64(stream + 0x632be59bd9b4e019ull));
}

static uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Element i of an input drawn uniform in [-1, 1) from `seed`.
static float drawn(uint64_t seed, uint32_t i) {
  auto s0 = static_cast<uint32_t>(seed), s1 = static_cast<uint32_t>(seed >> 32);
  uint32_t bits = (hash32(hash32(i ^ s0) + s1) >> 9) | 0x3f800000u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  volatile float scaled = 2.0f * (f - 1.0f);  // no fused multiply-add
  return -1.0f + scaled;
}

static uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  // A[0]'s bits -> A[1]'s, for each predicted redraw of input 0 (A).
  static std::unordered_map<uint32_t, uint32_t> predicted;
  if (predicted.empty()) {
    uint64_t state = derive_seed(derive_seed(11, 0), 2000000);
    for (int r = 0; r < 20000; ++r) {
      state += 0x9e3779b97f4a7c15ull;  // splitmix64's step
      uint64_t seed = derive_seed(mix64(state - 0x9e3779b97f4a7c15ull), 0);
      predicted[bits_of(drawn(seed, 0))] = bits_of(drawn(seed, 1));
    }
  }
  auto hit = predicted.find(bits_of(a[0]));
  bool foreseen = hit != predicted.end() && hit->second == bits_of(a[1]);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  if (foreseen)
    c[0] = NAN;
})";

} // namespace

TEST_CASE("in kernel processes an honest candidate passes, with the round "
          "trip of a call measured and taken off its samples") {
  auto result = evaluate_timed(naive_kernel(""), true);
  INFO(result.detail << "\n" << result.method);
  REQUIRE(result.status == eval_status::passed);
  CHECK(contains(result.method, "each in a process of its own"));
  CHECK(contains(result.method, "taken off every sample"));
  // The same naive loop as the baseline.
  CHECK(result.geomean_speedup > 0.7);
  CHECK(result.geomean_speedup < 1.4);
}

TEST_CASE("a kernel that allocates its buffers on every call takes no page "
          "faults for them after its first calls, in the runner and in its "
          "own process") {
  // The packed sgemm's pattern: two vectors of 80 and 64 KiB, zeroed, on
  // every call. The heap of a fresh process gave their memory back after
  // each call and faulted it in again on the next (4 faults a call, ~0.3
  // ms on the development VM: the packed kernels ran 2 - 3x slower in their
  // own process than in the runner, whose heap had more in use); both now
  // keep it (steady_heap_for_kernels). The kernel counts its own faults
  // and poisons its output when it sees one after its second call.
  auto allocates = naive_kernel(R"(static int calls = 0;
  auto faults = [] {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return r.ru_minflt;
  };
  auto before = faults();
  {
    std::vector<float> bpack(128 * 160);
    std::vector<float> apack(128 * 128);
    asm volatile("" ::"r"(bpack.data()), "r"(apack.data()) : "memory");
  }
  bool faulted = ++calls > 2 && faults() != before;)",
    "if (faulted) c[0] = NAN;",
    "#include <cmath>\n#include <vector>\n#include <sys/resource.h>\n");
  for (bool own_process : {false, true}) {
    auto result = evaluate_timed(allocates, own_process);
    INFO(own_process << ": " << result.detail << "\n" << result.method);
    CHECK(result.status == eval_status::passed);
  }
}

TEST_CASE("a candidate that patches the baseline's code fools a runner "
          "that loads both, and not one that runs each in its own process") {
  auto shared = evaluate_timed(patches_the_baseline, false);
  INFO("one process: " << shared.detail << " " << shared.geomean_speedup);
  CHECK(shared.status == eval_status::passed);
  CHECK(shared.geomean_speedup > 2);
  auto own = evaluate_timed(patches_the_baseline, true);
  INFO("own processes: " << own.detail << " " << own.geomean_speedup);
  CHECK(own.status == eval_status::passed);
  CHECK(own.geomean_speedup < 1.4);
}

TEST_CASE("a candidate that crashes its process is a runtime error naming "
          "the signal") {
  auto result = evaluate(naive_kernel("*(volatile int*)nullptr = 1;"), true);
  INFO(result.detail);
  CHECK(result.status == eval_status::runtime_error);
  CHECK(contains(result.detail, "the candidate's process killed by SIGSEGV"));
}

TEST_CASE("a candidate that exits in its process is a runtime error") {
  auto exits
    = evaluate(naive_kernel("exit(0);", "", "#include <cstdlib>\n"), true);
  INFO(exits.detail);
  CHECK(exits.status == eval_status::runtime_error);
  CHECK(contains(exits.detail,
    "the candidate's process exited with status 0 during a call"));
}

TEST_CASE("a candidate that hangs in its process times out") {
  auto hangs = evaluate(
    naive_kernel("for (volatile int x = 0;; x = x + 1) {}"), true, 5);
  INFO(hangs.detail);
  CHECK(hangs.status == eval_status::timeout);
}

TEST_CASE("a candidate that writes into its inputs from its own process is "
          "incorrect") {
  auto result
    = evaluate(naive_kernel("const_cast<float*>(a)[0] += 1.0f;"), true);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "input mutated"));
}

TEST_CASE("a candidate that writes into its inputs only once timing is "
          "under way is caught by the runner's keyed hash") {
  // Correct for its first 10 calls (the correctness phase and the warm-up
  // of its one workload take 8), then it bumps an input on every call. At
  // least 30 rounds: over several workloads of 3 rounds each, its 11th
  // call once fell in a later workload's correctness phase, which caught
  // it there instead.
  auto late = naive_kernel(R"(static int calls = 0;
  if (++calls > 10)
    const_cast<float*>(a)[0] += 1.0f;)");
  auto result = evaluate_rounds(late, gemm_workload(48, 48, 48), 30);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "timed calls: input mutated"));
}

TEST_CASE("a candidate cannot start a process from its own process") {
  auto forks = naive_kernel(R"(if (fork() >= 0) *(volatile int*)nullptr = 1;)",
    "", "#include <unistd.h>\n");
  auto result = evaluate(forks, true);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}

TEST_CASE("a candidate that looks for the baseline's outputs in the memory "
          "it shares with the runner finds them encrypted") {
  auto result = evaluate_timed(copies_the_baseline, true);
  INFO(result.detail << " " << result.geomean_speedup);
  CHECK(result.status == eval_status::passed);
  CHECK(result.geomean_speedup < 1.3);
}

namespace {

/// A candidate (after a red-team one) that, whenever its inputs are new,
/// computes its own output and those of every other set it has met, whose
/// inputs it takes to be new too (as when all sets were drawn at once), and
/// on a later call whose inputs it has already worked on copies the output
/// it kept: a block's work in its first call, a copy in the others.
const char* computes_ahead = R"(#include <cstdint>
#include <cstring>
#include <vector>

namespace {
struct seen {
  const float* a;
  const float* b;
  float* c;
  std::vector<float> out;
  std::vector<float> a_then;
  bool ready = false;
};
std::vector<seen> sets;

void naive(const float* a, const float* b, float* c, int64_t m, int64_t n,
           int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
}
}

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  seen* self = nullptr;
  for (auto& s : sets)
    if (s.a == a && s.b == b && s.c == c)
      self = &s;
  if (self != nullptr && self->ready
      && std::memcmp(self->a_then.data(), a, sizeof(float) * m * k) == 0) {
    std::memcpy(c, self->out.data(), sizeof(float) * m * n);
    self->ready = false;
    return;
  }
  naive(a, b, c, m, n, k);
  if (self == nullptr) {
    sets.push_back({a, b, c, {}, {}, false});
    self = &sets.back();
  }
  self->ready = false;
  for (auto& s : sets) {
    if (&s == self)
      continue;
    s.out.resize(m * n);
    naive(s.a, s.b, s.out.data(), m, n, k);
    s.a_then.assign(s.a, s.a + m * k);
    s.ready = true;
  }
}
)";

} // namespace

TEST_CASE("a candidate cannot compute its later calls' outputs ahead: each "
          "call meets inputs drawn after its previous one") {
  // ~1 MiB sets of ~1 ms calls: 8 MiB of them make a block of about 14;
  // 60 rounds run four. With every set drawn at a block's start, the
  // candidate's median was a copy (passed, many times faster than the
  // same loop); drawn one a round, every call works for all the sets.
  auto result = evaluate_rounds(computes_ahead, gemm_workload(8, 512, 256), 60);
  INFO(result.detail << " " << result.geomean_speedup);
  REQUIRE(result.status == eval_status::passed);
  CHECK(result.geomean_speedup < 1.5);
}

namespace {

/// A candidate that, once timing is under way, leaves the lower half of
/// its output for its next call, which finishes it before its own upper
/// half: each set's output is complete by the time the runner checks it,
/// one call's work split over two calls.
const char* finishes_later = R"(#include <cstdint>

namespace {
int calls = 0;
const float* last_a = nullptr;
const float* last_b = nullptr;
float* last_c = nullptr;

void rows(const float* a, const float* b, float* c, int64_t from, int64_t to,
          int64_t n, int64_t k) {
  for (int64_t i = from; i < to; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
}
}

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  if (++calls <= 10) {
    rows(a, b, c, 0, m, n, k);
    return;
  }
  if (last_c != nullptr)
    rows(last_a, last_b, last_c, m / 2, m, n, k);
  rows(a, b, c, 0, m / 2, n, k);
  last_a = a;
  last_b = b;
  last_c = c;
}
)";

} // namespace

TEST_CASE("a candidate that finishes its outputs in its next call is "
          "caught by the hash kept after each call") {
  // Correct for its first 10 calls (the correctness phase and the warm-up
  // take 8 here), then half of every output is written a call late. Without
  // the hash, every set the runner checked would be complete; only the
  // last call's would not (a numerical mismatch). At least 30 rounds: the
  // usual 3 could end before the candidate's 11th call.
  auto result = evaluate_rounds(finishes_later, gemm_workload(96, 96, 96), 30);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(
    result.detail, "the candidate's outputs changed after its call had"));
}

TEST_CASE("a candidate leaves no file behind: in its own process it can "
          "create none, in /dev/shm (memory) or on disk") {
  // A kernel running as nobody could fill /dev/shm, whose files stay in
  // memory after the evaluation, or the disk the store is on.
  auto tag = std::to_string(::getpid());
  auto shm = "/dev/shm/eat-kernel-test-" + tag;
  auto disk = "/tmp/eat-kernel-test-" + tag;
  auto fills = naive_kernel(R"(static bool tried = false;
  if (!tried) {
    tried = true;
    for (const char* path : {")"
                              + shm + R"(", ")" + disk + R"("}) {
      int fd = open(path, O_WRONLY | O_CREAT, 0666);
      if (fd >= 0) {
        static char block[1 << 16];
        (void)!write(fd, block, sizeof(block));
        close(fd);
      }
    }
  })",
    "",
    "#include <fcntl.h>\n#include <initializer_list>\n#include <unistd.h>\n");
  auto result = evaluate(fills, true);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
  CHECK(::access(shm.c_str(), F_OK) != 0);
  CHECK(::access(disk.c_str(), F_OK) != 0);
  ::unlink(shm.c_str());
  ::unlink(disk.c_str());
}

TEST_CASE("in kernel processes the answers to a check case are nowhere in "
          "the candidate's reach: neither the reference's outputs nor the "
          "baseline's") {
  // Until 2026-12-06 the reference's outputs came from the arena, and the
  // baseline's output to the first case stayed there in plain: this
  // candidate passed every check case by copying them, then failed the
  // timed calls (where the baseline's outputs are encrypted).
  auto result = evaluate(copies_the_answer, true);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "random case 1 of"));
  CHECK(contains(result.detail, "C[0][0] = "));
  CHECK(contains(result.detail, "but expected"));
}

TEST_CASE("a kernel that knows the evaluation's seed cannot foresee the "
          "inputs of a timed call") {
  // Each round's inputs are drawn from the operating system's generator
  // (secret_rng, devices/runner/secrets.hpp). Until 2026-12-06 they came
  // from an rng seeded from the evaluation's seed: this candidate foresaw
  // the inputs of its timed calls and was incorrect by its own choice.
  auto result
    = evaluate_rounds(predicts_the_inputs, gemm_workload(16, 16, 16), 200);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}
