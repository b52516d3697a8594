// Specification of kernel processes (`[devices.cpu] kernel_processes`,
// devices/runner/kernel_host.hpp): the baseline and the candidate each run
// in a process of their own that shares only their buffers with the
// runner, so that a kernel cannot reach what decides its verdict. Each case
// evaluates a candidate end to end through the built eat-runner.

#include <catch2/catch.hpp>

#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Evaluates `source` on a fresh device, in kernel processes or not.
eval_result evaluate(const std::string& source, bool kernel_processes) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.kernel_processes = kernel_processes;
  auto dev = make_device(opts);
  return dev->evaluate(sgemm_task(), make_candidate("c", source), 11);
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

} // namespace

TEST_CASE("in kernel processes an honest candidate passes, with the round "
          "trip of a call measured and taken off its samples") {
  auto result = evaluate(naive_kernel(""), true);
  INFO(result.detail << "\n" << result.method);
  REQUIRE(result.status == eval_status::passed);
  CHECK(contains(result.method, "each in a process of its own"));
  CHECK(contains(result.method, "taken off every sample"));
  // The same naive loop as the baseline.
  CHECK(result.geomean_speedup > 0.7);
  CHECK(result.geomean_speedup < 1.4);
}

TEST_CASE("a candidate that patches the baseline's code fools a runner "
          "that loads both, and not one that runs each in its own process") {
  auto shared = evaluate(patches_the_baseline, false);
  INFO("one process: " << shared.detail << " " << shared.geomean_speedup);
  CHECK(shared.status == eval_status::passed);
  CHECK(shared.geomean_speedup > 2);
  auto own = evaluate(patches_the_baseline, true);
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

TEST_CASE("a candidate that writes into its inputs from its own process is "
          "incorrect") {
  auto result
    = evaluate(naive_kernel("const_cast<float*>(a)[0] += 1.0f;"), true);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "input mutated"));
}

TEST_CASE("a candidate whose thread works between its calls is rejected for "
          "hidden work") {
  auto spins = naive_kernel(R"(static std::atomic<bool> started{false};
  if (!started.exchange(true))
    std::thread([] { for (volatile unsigned long x = 0;; ++x) {} }).detach();)",
    "", "#include <atomic>\n#include <thread>\n");
  auto result = evaluate(spins, true);
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "hidden work: the candidate's process used"));
}

TEST_CASE("a candidate cannot start a process from its own process") {
  auto forks = naive_kernel(R"(if (fork() >= 0) *(volatile int*)nullptr = 1;)",
    "", "#include <unistd.h>\n");
  auto result = evaluate(forks, true);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}
