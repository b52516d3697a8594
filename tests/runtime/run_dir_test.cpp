// Specification of run directories (runtime/run_dir.hpp): fresh names, the
// files a new run gets, and the lock that keeps a second process out.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/protocol/error.hpp"
#include "runtime/run_dir.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_files.hpp"

namespace fs = std::filesystem;
using namespace eat;

namespace {

using eat::test::read_text;

} // namespace

TEST_CASE("a new run directory holds the configuration, a store and a work "
          "folder") {
  test::temp_dir tmp;
  auto dir = run_dir::create(tmp.path(), "demo", "[run]\ntask = \"sgemm\"\n");
  REQUIRE(dir);
  CHECK(dir->path().parent_path() == tmp.path());
  CHECK(dir->id().rfind("demo-", 0) == 0);
  CHECK(read_text(dir->path() / "config.toml") == "[run]\ntask = \"sgemm\"\n");
  CHECK(fs::is_directory(dir->store_dir()));
  CHECK(fs::is_directory(dir->work_dir()));
  CHECK(dir->best_kernel() == dir->path() / "best_kernel.cpp");
}

TEST_CASE("a run directory is its owner's alone, also once resumed") {
  // Kernels running as `run_as` could stat its store and its agents'
  // kernels (sizes, times) though they could not open them.
  test::temp_dir tmp;
  fs::path path;
  {
    auto dir = run_dir::create(tmp.path(), "demo", "");
    REQUIRE(dir);
    path = dir->path();
    CHECK(fs::status(path).permissions() == fs::perms::owner_all);
  }
  fs::permissions(path, fs::perms{0755}); // a run made before runs were private
  auto opened = run_dir::open(path);
  REQUIRE(opened);
  CHECK(fs::status(path).permissions() == fs::perms::owner_all);
}

TEST_CASE("two runs started in the same second get different directories") {
  test::temp_dir tmp;
  auto a = run_dir::create(tmp.path(), "demo", "");
  auto b = run_dir::create(tmp.path(), "demo", "");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->path() != b->path());
}

TEST_CASE("a directory that holds a run is not started again") {
  test::temp_dir tmp;
  auto first = run_dir::create(tmp.path(), "demo", "", tmp.path() / "run");
  REQUIRE(first);
  first = caf::error{}; // releases the lock
  auto again = run_dir::create(tmp.path(), "demo", "", tmp.path() / "run");
  REQUIRE(!again);
  CHECK_THAT(render(again.error()), Catch::Contains("already holds a run"));
  CHECK_THAT(render(again.error()), Catch::Contains("eat resume"));
}

TEST_CASE("a run is not started in a directory that holds something else, "
          "which stays as it was") {
  test::temp_dir tmp;
  auto mine = tmp.path() / "mine";
  fs::create_directories(mine / "work" / "scratch" / "data");
  std::ofstream{mine / "config.toml"} << "mine\n";
  auto run = run_dir::create(tmp.path(), "demo", "[run]\n", mine);
  REQUIRE(!run);
  CHECK(code_of(run.error()) == error::invalid_run_dir);
  CHECK_THAT(
    render(run.error()), Catch::Contains("is not empty and holds no run"));
  CHECK(read_text(mine / "config.toml") == "mine\n");
  CHECK(fs::is_directory(mine / "work" / "scratch" / "data"));
  std::ofstream{tmp.path() / "file"} << "x";
  auto file = run_dir::create(tmp.path(), "demo", "", tmp.path() / "file");
  REQUIRE(!file);
  CHECK_THAT(render(file.error()), Catch::Contains("is not a directory"));
  fs::create_directory(tmp.path() / "empty");
  CHECK(run_dir::create(tmp.path(), "demo", "", tmp.path() / "empty"));
}

TEST_CASE("a run directory given relatively is known by its absolute path") {
  test::temp_dir tmp;
  auto before = fs::current_path();
  fs::current_path(tmp.path());
  auto made = run_dir::create("runs", "demo", "", "run");
  auto opened = caf::expected<run_dir>{caf::error{}};
  if (made) {
    made = caf::error{};
    opened = run_dir::open("run");
  }
  fs::current_path(before);
  REQUIRE(opened);
  CHECK(opened->path() == tmp.path() / "run");
}

TEST_CASE("only one holder of a run directory at a time") {
  test::temp_dir tmp;
  auto holder = run_dir::create(tmp.path(), "demo", "", tmp.path() / "run");
  REQUIRE(holder);
  auto second = run_dir::open(tmp.path() / "run");
  REQUIRE(!second);
  CHECK(code_of(second.error()) == error::invalid_run_dir);
  CHECK_THAT(render(second.error()), Catch::Contains("in use"));
  holder = caf::error{};
  CHECK(run_dir::open(tmp.path() / "run"));
}

TEST_CASE("opening a directory that is not a run says what is missing") {
  test::temp_dir tmp;
  auto missing = run_dir::open(tmp.path() / "nope");
  REQUIRE(!missing);
  CHECK_THAT(render(missing.error()), Catch::Contains("no such directory"));
  auto plain = run_dir::open(tmp.path());
  REQUIRE(!plain);
  CHECK_THAT(render(plain.error()), Catch::Contains("no store/ folder"));
}

TEST_CASE("what a killed process left in work/ is removed, and compiled "
          "objects stay") {
  test::temp_dir tmp;
  auto dir = run_dir::create(tmp.path(), "demo", "");
  REQUIRE(dir);
  auto work = dir->work_dir();
  // An evaluation's scratch directory with a subdirectory its kernel made
  // unwritable, an unfinished build beside a finished object, and the same
  // in a GPU backend's folder.
  fs::create_directories(work / "scratch/run.a1b2c3/locked/deep");
  fs::permissions(work / "scratch/run.a1b2c3/locked",
    fs::perms::owner_read | fs::perms::owner_exec);
  fs::create_directories(work / "cache/build.d4e5f6");
  test::write_text(work / "cache/build.d4e5f6/candidate.cpp", "int x;\n");
  test::write_text(work / "cache/0123abcd.so", "object");
  test::write_text(work / "cache/0123abcd.log", "");
  fs::create_directories(work / "cuda/scratch/gpu-run.g7h8i9");
  fs::create_directories(work / "cuda/cache/build.j0k1l2");
  test::write_text(work / "cuda/cache/4567ef.so", "object");

  CHECK(dir->remove_leftovers() == 4);
  CHECK(fs::is_empty(work / "scratch"));
  CHECK_FALSE(fs::exists(work / "cache/build.d4e5f6"));
  CHECK(read_text(work / "cache/0123abcd.so") == "object");
  CHECK(fs::exists(work / "cache/0123abcd.log"));
  CHECK(fs::is_empty(work / "cuda/scratch"));
  CHECK_FALSE(fs::exists(work / "cuda/cache/build.j0k1l2"));
  CHECK(read_text(work / "cuda/cache/4567ef.so") == "object");
  // Nothing left: nothing to do.
  CHECK(dir->remove_leftovers() == 0);
}
