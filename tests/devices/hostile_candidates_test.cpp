// The hostile-candidate suite (BENCHMARK-PROTOCOL.md section 4): each kernel
// below breaks a rule on purpose, and the device must name what happened
// with the right status and keep working. The cases of processes a kernel
// starts are in hostile_processes_test.cpp.

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

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
  auto hung = dev->evaluate(task, make_candidate("hang", hang), 1);
  INFO(hung.detail);
  CHECK(hung.status == eval_status::timeout);
  CHECK(contains(hung.detail, "exceeded the 2 s deadline"));
  // The runner's time, not the compiler's, which a loaded machine slows.
  CHECK(hung.run_s >= 2);
  CHECK(hung.run_s < 10);
  auto next = dev->evaluate(
    task, make_candidate("good", tiled_source("ikj", 8, 8, 8)), 2);
  CHECK(next.status == eval_status::passed);
}

TEST_CASE("a candidate that does not compile is a compile error with the "
          "compiler's first error in its detail and all of it in the build "
          "log") {
  auto result = evaluate_source("#include <cstdint>\n"
                                "extern \"C\" void eat_gemm() { return 1 }\n");
  CHECK(result.status == eval_status::compile_error);
  CHECK(contains(result.detail,
    "the candidate does not compile: exited with status 1: candidate.cpp:2:"));
  CHECK(contains(result.detail, "error"));
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

TEST_CASE("a task that allows run-to-run differences passes runs that "
          "differ within tolerance, and fails a second run beyond it") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = sgemm_task();
  task.deterministic = false;
  auto evaluate = [&](const std::string& epilogue) {
    return dev->evaluate(task,
      make_candidate("c", naive_kernel("", epilogue, "#include <cmath>\n")), 7);
  };
  auto close = evaluate("static int calls = 0;\n"
                        "if (++calls % 2 == 0) c[0] = std::nextafter(c[0], "
                        "1e30f);");
  INFO(close.detail);
  CHECK(close.status == eval_status::passed);
  auto far = evaluate("static int calls = 0;\n"
                      "if (++calls % 2 == 0) c[0] += 1.0f;");
  CHECK(far.status == eval_status::incorrect);
  CHECK(contains(far.detail, "second run on the same inputs"));
  CHECK(contains(far.detail, "C[0][0]"));
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

namespace {

/// The naive loop, which from its 7th call on (past the correctness
/// phase's 6 calls on one workload) errs by 1.5 times sgemm_task's
/// tolerance (atol 1e-4, rtol 1e-4) in every element: within the twice
/// the tolerance allowed against the baseline's output, outside the
/// tolerance against the reference.
std::string errs_when_timed() {
  return naive_kernel("static int calls = 0;\n++calls;",
    "if (calls > 6)\n"
    "  for (int64_t i = 0; i < m * n; ++i)\n"
    "    c[i] += 1.5f * (1e-4f + 1e-4f * std::fabs(c[i]));",
    "#include <cmath>\n");
}

eval_result evaluate_timed_errors(uint32_t reference_samples, bool processes) {
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.timing.reference_samples = reference_samples;
  opts.kernel_processes = processes;
  auto dev = make_device(opts);
  return dev->evaluate(sgemm_task({gemm_workload(48, 48, 48)}),
    make_candidate("sloppy", errs_when_timed()), 7);
}

} // namespace

TEST_CASE("a kernel that errs by 1.5 times the tolerance in its timed calls "
          "only is caught by the sample compared with the reference") {
  for (bool processes : {false, true}) {
    INFO("kernel processes: " << processes);
    auto result = evaluate_timed_errors(4, processes);
    INFO(result.detail);
    CHECK(result.status == eval_status::incorrect);
    CHECK(contains(result.detail, "timed calls: timed output "));
    CHECK(contains(result.detail, "compared with the reference after the "
                                  "timing"));
  }
  // Without the sample, the comparison with the baseline's outputs (at
  // twice the tolerance) lets it pass.
  auto unchecked = evaluate_timed_errors(0, false);
  INFO(unchecked.detail);
  CHECK(unchecked.status == eval_status::passed);
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

TEST_CASE("a kernel whose static constructor starts a thread is rejected "
          "when it is loaded") {
  auto source = naive_kernel("", "", "#include <thread>\n")
                + "\nnamespace {\nconst bool started = [] {\n"
                  "  std::thread([] { for (;;) std::this_thread::yield(); })"
                  ".detach();\n  return true;\n}();\n}\n";
  auto result = evaluate_source(source);
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail,
    "hidden threads: the candidate's constructors started threads"));
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

TEST_CASE("a kernel that writes a constant output is incorrect") {
  auto constant = R"(#include <cstdint>
extern "C" void eat_gemm(const float*, const float*, float* c, int64_t m,
                         int64_t n, int64_t) {
  for (int64_t i = 0; i < m * n; ++i)
    c[i] = 1.0f;
})";
  auto result = evaluate_source(constant);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "random case 1"));
  CHECK(contains(result.detail, "C[0][0] = 1 but expected"));
}

TEST_CASE("a kernel correct for one seed only (it replays its first output) "
          "is incorrect on the next case") {
  auto replay = naive_kernel("static std::vector<float> first;\n"
                             "if (!first.empty()) {\n"
                             "  std::copy(first.begin(), first.end(), c);\n"
                             "  return;\n"
                             "}",
    "first.assign(c, c + m * n);", "#include <algorithm>\n#include <vector>\n");
  auto result = evaluate_source(replay);
  INFO(result.detail);
  CHECK(result.status == eval_status::incorrect);
  CHECK(contains(result.detail, "random case 2"));
  CHECK(contains(result.detail, "but expected"));
}

TEST_CASE("a kernel that keeps each set's inputs and output and recomputes "
          "only what changed gains nothing") {
  // Per input set (known by its pointer) it keeps copies of A, B and C and
  // recomputes only the rows of C whose row of A changed and the columns
  // whose column of B changed. When a timing block changed one element of
  // each input, that was one row and one column: ~10x the baseline (the
  // same loop) while passing every check. The harness draws every element
  // anew, so it recomputes everything.
  auto incremental = R"(#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

struct kept {
  std::vector<float> a, b, c;
};

extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  static std::map<const float*, kept> sets;
  auto& s = sets[a];
  bool known = s.c.size() == std::size_t(m * n);
  std::vector<char> row(m, !known), col(n, 0);
  for (int64_t i = 0; known && i < m; ++i)
    for (int64_t p = 0; p < k && !row[i]; ++p)
      row[i] = a[i * k + p] != s.a[i * k + p];
  for (int64_t p = 0; known && p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      col[j] |= b[p * n + j] != s.b[p * n + j];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (!row[i] && !col[j]) {
        c[i * n + j] = s.c[i * n + j];
        continue;
      }
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  s.a.assign(a, a + m * k);
  s.b.assign(b, b + k * n);
  s.c.assign(c, c + m * n);
})";
  // Calls of a few ms on sets of 2 MiB: the 64 MiB rotation holds ~32
  // sets, and a second of sampling goes through several blocks.
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.timing.min_time_s = 1;
  opts.timing.max_time_s = 2;
  auto result
    = make_device(opts)->evaluate(sgemm_task({gemm_workload(512, 512, 16)}),
      make_candidate("incremental", incremental), 7);
  INFO(result.detail << " " << result.geomean_speedup);
  CHECK(result.status == eval_status::passed);
  CHECK(result.geomean_speedup < 1.4);
}

TEST_CASE("a thread that spins only while the baseline runs is rejected as a "
          "hidden thread") {
  // The thread burns the pinned core whenever the candidate is not running,
  // which would slow the baseline's samples and inflate the speedup.
  auto result = evaluate_source(naive_kernel(
    "static std::atomic<bool> inside{false};\n"
    "static std::atomic<bool> started{false};\n"
    "if (!started.exchange(true))\n"
    "  std::thread([] {\n"
    "    for (volatile unsigned x = 0;; x = x + 1)\n"
    "      if (inside.load()) std::this_thread::yield();\n"
    "  }).detach();\n"
    "inside = true;",
    "inside = false;", "#include <atomic>\n#include <thread>\n"));
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "hidden threads"));
}

TEST_CASE("a thread that starts once timing is under way, slows the "
          "baseline and is gone before the end is rejected as hidden work") {
  // No thread is alive after any call the checks look at, and none at the
  // end of timing: only its CPU time gives it away. It starts at the 20th
  // call (the correctness checks and the warm-up make 8), burns the pinned
  // core whenever the candidate is not running, and stops by itself at the
  // 100th, long before the 150 rounds of timing are in (a number of
  // rounds, not a time: on a loaded machine 0.5 s of timing once ended
  // before the 100th call, with the thread still running).
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.timing.min_samples = 150;
  opts.timing.min_time_s = 0.1;
  opts.timing.max_time_s = 20;
  auto dev = make_device(opts);
  auto kernel = naive_kernel(
    "static std::atomic<int> calls{0};\n"
    "static std::atomic<bool> inside{false};\n"
    "if (++calls == 20)\n"
    "  std::thread([] {\n"
    "    for (volatile unsigned x = 0; calls.load() < 100; x = x + 1)\n"
    "      if (inside.load()) std::this_thread::yield();\n"
    "  }).detach();\n"
    "inside = true;",
    "inside = false;", "#include <atomic>\n#include <thread>\n");
  auto result = dev->evaluate(
    sgemm_task({gemm_workload(48, 48, 48)}), make_candidate("late", kernel), 7);
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "timed calls: hidden threads: other threads "
                                "or child processes used "));
}

TEST_CASE("a kernel that forks a helper on every call and reaps it before "
          "returning is rejected as hidden work") {
  // Reaped children are invisible to the process checks after each call;
  // their CPU time is not.
  auto result = evaluate_source(naive_kernel(
    "pid_t pid = ::fork();\n"
    "if (pid == 0) {\n"
    "  for (volatile int x = 0; x < 2000000; x = x + 1) {}\n"
    "  ::_exit(0);\n"
    "}\n"
    "if (pid > 0) ::waitpid(pid, nullptr, 0);",
    "", "#include <sys/wait.h>\n#include <unistd.h>\n"));
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail, "hidden threads: other threads or child "
                                "processes used "));
}

TEST_CASE("a correct kernel faster than the speed of light is rejected") {
  // A correct kernel cannot beat light, so light is slowed down instead: a
  // peak of 1 FLOP/s and 1 B/s through the test seam in cpu_options.
  auto dir = make_temp_dir();
  auto opts = fast_options(dir);
  opts.peak_flops_override = 1;
  opts.peak_bw_override = 1;
  auto dev = make_device(opts);
  auto result = dev->evaluate(
    sgemm_task(), make_candidate("light", naive_kernel("")), 7);
  INFO(result.detail);
  CHECK(result.status == eval_status::rejected);
  CHECK(contains(result.detail,
    "faster than the speed of light on m37_n23_k29: median "));
  CHECK(contains(result.detail, " ns < T_SOL 4.936e+13 ns"));
  CHECK(result.workloads.at(0).status == eval_status::rejected);
  CHECK(result.geomean_speedup == 0);
  CHECK(contains(result.method, "speed-of-light gate: peak ~1e-09 GFLOP/s"));
}

TEST_CASE("a kernel that borrows the task's reference from the runner's "
          "memory is caught") {
  // The reference .so is loaded in the runner (RTLD_LOCAL); the kernel finds
  // it with dl_iterate_phdr, reopens it with RTLD_NOLOAD and calls it.
  auto borrow = R"(#include <cstdint>
#include <dlfcn.h>
#include <link.h>
#include <vector>
using ref_fn = void (*)(const float*, const float*, double*, int64_t, int64_t,
                        int64_t);
static int find(dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == 0)
    return 0;
  void* h = ::dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr)
    return 0;
  if (void* f = ::dlsym(h, "eat_gemm_reference")) {
    *static_cast<void**>(out) = f;
    return 1;
  }
  return 0;
}
extern "C" void eat_gemm(const float* a, const float* b, float* c, int64_t m,
                         int64_t n, int64_t k) {
  static void* ref = nullptr;
  if (ref == nullptr)
    ::dl_iterate_phdr(find, &ref);
  std::vector<double> out(m * n);
  reinterpret_cast<ref_fn>(ref)(a, b, out.data(), m, n, k);
  for (int64_t i = 0; i < m * n; ++i)
    c[i] = static_cast<float>(out[i]);
})";
  // The runner locks the reference's code before loading the candidate and
  // unlocks it only around its own calls (devices/runner/code_lock.hpp).
  auto result = evaluate_source(borrow);
  INFO(result.detail);
  CHECK(result.status == eval_status::runtime_error);
  CHECK(contains(result.detail, "killed by SIGSEGV"));
}

TEST_CASE("a kernel's temporary files go with its scratch directory") {
  // The kernel makes a file where TMPDIR says, as tools and libraries do,
  // and writes down where it made it.
  auto dir = make_temp_dir();
  auto made = kernel_writable_file(dir, "made");
  auto prologue = R"(
  static const bool once = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string{tmp ? tmp : "/tmp"} + "/left-XXXXXX";
    int fd = ::mkstemp(path.data());
    if (fd >= 0)
      ::close(fd);
    // Run as another user, TMPDIR may be /proc/self/cwd: the file's
    // real path is what the test can look for.
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      path = real;
      std::free(real);
    }
    std::ofstream{")"
                  + made.string() + R"("} << path;
    return true;
  }();
  (void)once;)";
  auto includes = "#include <cstdlib>\n#include <fstream>\n#include <string>\n"
                  "#include <unistd.h>\n";
  auto dev = make_device(fast_options(dir));
  auto result = dev->evaluate(sgemm_task(),
    make_candidate("litter", naive_kernel(prologue, "", includes)), 3);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
  std::string path;
  std::ifstream{made} >> path;
  INFO("the kernel's file: " << path);
  REQUIRE_FALSE(path.empty());
  CHECK_FALSE(std::filesystem::exists(path));
}
