// Specification of what a kernel in a process of its own cannot learn
// (`[devices.cpu] kernel_processes`, docs/harness.md "Kernel processes" and
// "Timing phase"): the answers to a check case, which stay out of the
// memory it shares with the runner, and the inputs of its coming timed
// calls, which no seed it could find predicts. Each case evaluates a
// red-team candidate end to end through the built eat-runner.

#include <string>

#include <catch2/catch.hpp>

#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

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

TEST_CASE("in kernel processes the answers to a check case are nowhere in "
          "the candidate's reach: neither the reference's outputs nor the "
          "baseline's") {
  // Until 2026-12-06 the reference's outputs came from the arena, and the
  // baseline's output to the first case stayed there in plain: this
  // candidate passed every check case by copying them, then failed the
  // timed calls (where the baseline's outputs are encrypted).
  auto result
    = evaluate_rounds(copies_the_answer, gemm_workload(37, 23, 29), 3);
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
