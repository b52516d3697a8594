// Specification of Landlock confinement (devices/landlock.hpp) as
// devices/subprocess starts children with it: a confined child reads
// beneath its read paths, writes beneath its write paths, reaches no other
// file and signals no process outside; the thread that spawned it stays
// free. Where the kernel has no Landlock, a confined spawn fails rather
// than start the child unconfined.

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "devices/landlock.hpp"
#include "devices/subprocess.hpp"
#include "tests/devices/test_support.hpp"
#include "tests/support/text_files.hpp"

using namespace eat::devices;
using namespace eat::devices::test;

namespace {

/// Runs `script` with sh, confined to `rules`, in `dir`.
caf::expected<captured_run> run_confined(const std::string& script,
  const landlock_rules& rules, const std::filesystem::path& dir) {
  process_spec spec;
  spec.argv = {"sh", "-c", script};
  spec.cwd = dir.string();
  spec.confine = rules;
  return run_captured(spec, 30);
}

} // namespace

TEST_CASE("a confined child reads and writes only where its rules say, and "
          "its parent stays free") {
  auto dir = make_temp_dir();
  auto base = dir.path();
  eat::test::write_text(base / "readable" / "a.txt", "readable\n");
  eat::test::write_text(base / "secret.txt", "secret 4711\n");
  std::filesystem::create_directories(base / "writable");
  auto rules = landlock_rules{system_read_paths(), {}};
  rules.read.push_back((base / "readable").string());
  rules.write.push_back((base / "writable").string());
  rules.write.push_back("/dev/null");
  auto run = run_confined("cat readable/a.txt; "
                          "echo w > writable/b.txt && cat writable/b.txt; "
                          "cat secret.txt 2>/dev/null || echo no-secret; "
                          "(echo x > readable/c.txt) 2>/dev/null || "
                          "echo no-write; ls . >/dev/null 2>&1 || echo no-ls",
    rules, base);
  if (landlock_abi() == 0) {
    WARN("no Landlock here: " << landlock_description());
    REQUIRE_FALSE(run);
    CHECK(contains(eat::render(run.error()), "cannot confine sh (Landlock)"));
    return;
  }
  REQUIRE(run);
  CHECK(run->output == "readable\nw\nno-secret\nno-write\nno-ls\n");
  CHECK_FALSE(std::filesystem::exists(base / "readable" / "c.txt"));
  // The spawning thread took no confinement: it still reads the secret.
  CHECK(eat::test::read_text(base / "secret.txt") == "secret 4711\n");
}

TEST_CASE("a confined child signals no process outside its confinement") {
  if (landlock_abi() < 6) {
    WARN("signals are confined from Landlock ABI 6; here: "
         << landlock_description());
    return;
  }
  auto dir = make_temp_dir();
  auto pid = std::to_string(::getpid());
  auto run = run_confined("kill -0 " + pid
                            + " 2>/dev/null && echo reached || echo refused; "
                              "kill -0 $$ && echo itself",
    landlock_rules{system_read_paths(), {"/dev/null"}}, dir.path());
  REQUIRE(run);
  CHECK(run->output == "refused\nitself\n");
}

TEST_CASE("the system's read paths hold the toolchain, not the machine's "
          "secrets") {
  auto paths = system_read_paths();
  auto has = [&](const std::string& path) {
    return std::find(paths.begin(), paths.end(), path) != paths.end();
  };
  CHECK(has("/usr"));
  CHECK(has("/etc/ld.so.cache"));
  CHECK_FALSE(has("/etc"));
  CHECK_FALSE(has("/proc"));
  CHECK_FALSE(has("/root"));
  CHECK_FALSE(has("/home"));
  CHECK_FALSE(has("/tmp"));
  CHECK_FALSE(has("/dev/zero"));
  CHECK_FALSE(has("/dev/urandom"));
}
