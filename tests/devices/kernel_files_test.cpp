// Specification of what a kernel in a process of its own can read
// (`[devices.cpu] kernel_processes`, docs/harness.md "Kernel processes"):
// the system's libraries and its own shared object, nothing of the run
// (its store, other teams' candidates) or of the machine's secrets. The
// cases evaluate candidates through the built eat-runner; where the kernel
// has no Landlock they say so and check that honest kernels still pass.

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "devices/landlock.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Evaluates `source` in kernel processes on a fresh device in `dir`.
eval_result evaluate_in_processes_at(
  const scratch_dir& dir, const std::string& source) {
  auto opts = fast_options(dir);
  opts.kernel_processes = true;
  auto dev = make_device(opts);
  return dev->evaluate(sgemm_task(), make_candidate("c", source), 11);
}

/// A kernel that aborts (a runtime error) if it can open `path`.
std::string reader_of(const std::string& path) {
  return naive_kernel(
    "if (FILE* f = std::fopen(\"" + path + "\", \"r\")) std::abort();", "",
    "#include <cstdio>\n#include <cstdlib>\n");
}

} // namespace

TEST_CASE("a candidate in its own process reads no file of the run or the "
          "machine") {
  // The world-readable file stands for the run's store, config and other
  // teams' candidates: without Landlock the candidate (run as `nobody`
  // under root, as eat's user otherwise) opened it, and aborted.
  auto dir = make_temp_dir();
  std::filesystem::permissions(dir.path(), std::filesystem::perms{0755});
  auto secret = dir.path() / "world-readable-secret.txt";
  std::ofstream{secret} << "4711\n";
  for (const auto& path : {secret.string(), std::string{"/proc/1/cmdline"},
         std::string{"/etc/passwd"}}) {
    auto result = evaluate_in_processes_at(dir, reader_of(path));
    INFO(path << ": " << result.detail);
    if (landlock_abi() == 0) {
      WARN("not confined in its files here: " << landlock_description());
      return;
    }
    CHECK(result.status == eval_status::passed);
  }
}

TEST_CASE("a candidate in its own process still reads the system's libraries "
          "and its CPU's description") {
  // What the loader, libstdc++ and OpenBLAS read.
  auto dir = make_temp_dir();
  auto reads = naive_kernel(R"(static bool tried = false;
  if (!tried) {
    tried = true;
    const char* paths[] = {"/etc/ld.so.cache", "/proc/cpuinfo",
      "/proc/self/status", "/sys/devices/system/cpu/online"};
    for (const char* path : paths) {
      FILE* f = std::fopen(path, "r");
      if (f == nullptr)
        std::abort();
      std::fclose(f);
    }
  })",
    "", "#include <cstdio>\n#include <cstdlib>\n");
  auto result = evaluate_in_processes_at(dir, reads);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}
