// The hostile-candidate suite (BENCHMARK-PROTOCOL.md section 4): each kernel
// below breaks a rule on purpose, and the device must name what happened
// with the right status and keep working.

#include <chrono>
#include <filesystem>

#include <catch2/catch.hpp>

#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Evaluates `source` on a fresh device with default test options.
eval_result evaluate_source(
  const std::string& source, double eval_timeout_s = 60) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.eval_timeout_s = eval_timeout_s;
  auto dev = make_device(opts);
  return dev->evaluate(sgemm_task(), make_candidate("bad", source), 7);
}

} // namespace

TEST_CASE("the reference check rejects a kernel that is off in one element") {
  auto result = evaluate_source(naive_kernel("", "c[m * n / 2] += 0.5f;"));
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "workload m37_n23_k29"));
  CHECK(contains(result.detail, "C[18][11]"));
  CHECK(contains(result.detail, "but expected"));
  CHECK(result.geomean_speedup == 0);
}

TEST_CASE("the reference check rejects a kernel that writes C transposed") {
  auto transposed = R"(#include <cstdint>
extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[j * m + i] = sum;
    }
})";
  auto result = evaluate_source(transposed);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "but expected"));
}

TEST_CASE("a kernel that leaves part of its output unwritten is incorrect") {
  auto skips = R"(#include <cstdint>
extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (i == 0 && j == 0)
        continue; // C[0][0] keeps whatever the harness left there
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
})";
  auto result = evaluate_source(skips);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "C[0][0] = nan"));
}

TEST_CASE("a candidate that segfaults is a runtime error naming the signal, "
          "and the device keeps working") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = sgemm_task();
  auto crash
    = naive_kernel("volatile int* bad = reinterpret_cast<volatile int*>(\n"
                   "  reinterpret_cast<uintptr_t>(c) & 0xf);\n"
                   "*bad = 1;");
  auto crashed = dev->evaluate(task, make_candidate("crash", crash), 1);
  INFO(crashed.detail);
  CHECK(crashed.status == eval_status::runtime_error);
  CHECK(contains(crashed.detail, "killed by SIGSEGV"));
  CHECK(std::filesystem::is_empty(dir.path() / "scratch"));
  auto next = dev->evaluate(
    task, make_candidate("good", tiled_source("ikj", 8, 8, 8)), 2);
  INFO(next.detail);
  CHECK(next.status == eval_status::passed);
}

TEST_CASE("a hanging candidate times out and the device keeps working") {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.eval_timeout_s = 2;
  auto dev = make_device(opts);
  auto task = sgemm_task({gemm_workload(8, 8, 8)});
  auto hang = naive_kernel("for (volatile int spin = 0;; spin = spin + 1) {}");
  auto start = std::chrono::steady_clock::now();
  auto hung = dev->evaluate(task, make_candidate("hang", hang), 1);
  auto seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  INFO(hung.detail);
  CHECK(hung.status == eval_status::timeout);
  CHECK(contains(hung.detail, "exceeded the 2 s deadline"));
  CHECK(seconds < 10);
  auto next = dev->evaluate(
    task, make_candidate("good", tiled_source("ikj", 8, 8, 8)), 2);
  CHECK(next.status == eval_status::passed);
}

TEST_CASE("a candidate that does not compile is a compile error with the "
          "compiler's message in the build log") {
  auto result = evaluate_source("#include <cstdint>\n"
                                "extern \"C\" void eat_gemm() { return 1 }\n");
  CHECK(result.status == eval_status::compile_error);
  CHECK(contains(result.detail, "does not compile"));
  CHECK(contains(result.build_log, "candidate.cpp:2"));
  CHECK(contains(result.build_log, "error"));
  CHECK(result.workloads.empty());
}

TEST_CASE("a candidate without the entry point is a compile error") {
  auto result = evaluate_source(
    "#include <cstdint>\n"
    "extern \"C\" void eat_gemm_v2(const float*, const float*, float*,\n"
    "                              int64_t, int64_t, int64_t) {}\n");
  INFO(result.detail);
  CHECK(result.status == eval_status::compile_error);
  CHECK(contains(result.detail, "does not define eat_gemm"));
}

TEST_CASE("exit(0) inside the kernel is a runtime error") {
  auto result = evaluate_source(
    naive_kernel("std::exit(0);", "", "#include <cstdlib>\n"));
  INFO(result.detail);
  CHECK(result.status == eval_status::runtime_error);
  CHECK(
    contains(result.detail, "runner exited with status 0 before reporting"));
}

TEST_CASE("a kernel that writes into its inputs is incorrect") {
  auto result
    = evaluate_source(naive_kernel("", "const_cast<float*>(a)[0] += 1.0f;"));
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "input mutated"));
}

TEST_CASE("a kernel that writes past its output is incorrect") {
  auto result = evaluate_source(naive_kernel("", "c[m * n + 3] = 1.0f;"));
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "wrote outside its output buffer"));
}

TEST_CASE("a kernel whose output differs between calls on the same inputs is "
          "incorrect") {
  auto result = evaluate_source(naive_kernel("",
    "static int calls = 0;\n"
    "if (++calls % 2 == 0) c[0] = std::nextafter(c[0], 1e30f);",
    "#include <cmath>\n"));
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "not deterministic"));
}

TEST_CASE("a kernel that caches results by input pointer is caught") {
  auto cached = R"(#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>
extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  static std::map<const float*, std::vector<float>> cache;
  auto hit = cache.find(a);
  if (hit != cache.end() && hit->second.size() == size_t(m * n)) {
    std::copy(hit->second.begin(), hit->second.end(), c);
    return;
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  cache[a] = std::vector<float>(c, c + m * n);
})";
  auto result = evaluate_source(cached);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "random case 2"));
}

TEST_CASE("a kernel that stops working once timing starts is caught by the "
          "check of timed outputs") {
  // The correctness phase makes 2 calls per case (3 cases): 6 calls.
  auto result = evaluate_source(naive_kernel("static int calls = 0;\n"
                                             "if (++calls > 6) return;"));
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "timed calls"));
}

TEST_CASE("garbage written to the reply pipe is a runtime error") {
  auto result = evaluate_source(naive_kernel(
    "static bool once = false;\n"
    "if (!once) { once = true; (void) ::write(4, \"garbage\", 7); }",
    "", "#include <unistd.h>\n"));
  INFO(result.detail);
  CHECK(result.status == eval_status::runtime_error);
  CHECK(contains(result.detail, "malformed reply"));
}

TEST_CASE("a kernel that leaves a CPU-burning thread behind is rejected") {
  auto result = evaluate_source(naive_kernel(
    "static std::atomic<bool> started{false};\n"
    "if (!started.exchange(true))\n"
    "  std::thread([] { for (volatile unsigned x = 0;; x = x + 1) {} })\n"
    "    .detach();",
    "", "#include <atomic>\n#include <thread>\n"));
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "hidden threads"));
}

TEST_CASE("a kernel that allocates beyond the address-space limit is a "
          "runtime error") {
  auto result
    = evaluate_source(naive_kernel("static char* volatile keep = nullptr;\n"
                                   "keep = new char[std::size_t{64} << 30];",
      "", "#include <cstddef>\n"));
  INFO(result.detail);
  CHECK(result.status == eval_status::runtime_error);
  CHECK(contains(result.detail, "out of memory"));
}
