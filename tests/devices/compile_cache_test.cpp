// The compile cache's bounds (devices/compile_cache.hpp): an object too
// large is the source's compile error, the cache keeps its size by removing
// the objects used least recently, and an object removed while its
// candidate waited is compiled again.

#include <chrono>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "devices/compiler.hpp"
#include "devices/cpu_device.hpp"
#include "tests/devices/test_support.hpp"

using namespace eat;
using namespace eat::devices;
using namespace eat::devices::test;

namespace fs = std::filesystem;

namespace {

void write_object(
  const fs::path& path, size_t bytes, std::chrono::minutes age) {
  std::ofstream{path} << std::string(bytes, 'x');
  std::ofstream{fs::path{path}.replace_extension(".log")} << "log\n";
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

} // namespace

TEST_CASE("an object over the size limit is the source's compile error and "
          "is not cached") {
  // A 1 GiB static array compiled in 15 s and stayed cached (red team).
  auto dir = make_temp_dir();
  auto c = compiler::make("g++", (dir.path() / "cache").string(), 60);
  REQUIRE(c);
  cache_limits limits;
  limits.object_bytes = 1 << 20;
  c->set_cache_limits(limits);
  auto big
    = c->compile("__attribute__((used)) static char big[2 << 20] = {1};\n",
      {"-O1"}, "candidate.cpp");
  REQUIRE(big);
  CHECK_FALSE(big->ok);
  CHECK_THAT(
    big->failure, Catch::StartsWith("the compiled object has 2 MiB, over the 1 "
                                    "MiB an object may have"));
  CHECK_FALSE(fs::exists(big->so_path));
  auto small
    = c->compile("int eat_small() { return 1; }\n", {"-O1"}, "candidate.cpp");
  REQUIRE(small);
  CHECK(small->ok);
}

TEST_CASE("the cache keeps its size by removing the objects used least "
          "recently, never one used within min_age") {
  auto dir = make_temp_dir();
  auto cache = dir.path() / "cache";
  fs::create_directories(cache);
  using std::chrono::minutes;
  write_object(cache / "oldest.so", 100, minutes{300});
  write_object(cache / "old.so", 100, minutes{200});
  write_object(cache / "recent.so", 100, minutes{10});
  write_object(cache / "newest.so", 100, minutes{0});
  cache_limits limits;
  limits.min_age = std::chrono::hours{1};
  limits.cache_bytes = 400;
  CHECK(trim_cache(cache, limits) == 0); // within its size
  limits.cache_bytes = 300;
  CHECK(trim_cache(cache, limits) == 1);
  CHECK_FALSE(fs::exists(cache / "oldest.so"));
  CHECK_FALSE(fs::exists(cache / "oldest.log"));
  CHECK(fs::exists(cache / "old.so"));
  limits.cache_bytes = 0; // the recent ones stay all the same
  CHECK(trim_cache(cache, limits) == 1);
  CHECK_FALSE(fs::exists(cache / "old.so"));
  CHECK(fs::exists(cache / "recent.so"));
  CHECK(fs::exists(cache / "newest.so"));
}

TEST_CASE("a cache hit marks the object as used, so that trimming keeps it") {
  auto dir = make_temp_dir();
  auto c = compiler::make("g++", (dir.path() / "cache").string(), 60);
  REQUIRE(c);
  auto first = c->compile("int eat_hit() { return 2; }\n", {"-O1"}, "k.cpp");
  REQUIRE(first);
  REQUIRE(first->ok);
  auto old = fs::file_time_type::clock::now() - std::chrono::hours{5};
  fs::last_write_time(first->so_path, old);
  auto hit = c->compile("int eat_hit() { return 2; }\n", {"-O1"}, "k.cpp");
  REQUIRE(hit);
  REQUIRE(hit->cached);
  CHECK(fs::last_write_time(hit->so_path) > old + std::chrono::hours{4});
}

TEST_CASE("a candidate whose object the cache removed while it waited is "
          "compiled again and evaluated") {
  auto dir = make_temp_dir();
  auto dev = make_device(fast_options(dir));
  auto task = sgemm_task();
  auto c = make_candidate("c1", tiled_source("ikj", 16, 32, 8));
  auto objects = dev->prepare(task, c);
  REQUIRE(objects.status == eval_status::passed);
  REQUIRE(objects_exist(objects));
  fs::remove(objects.candidate_object);
  fs::remove(objects.baseline_object);
  CHECK_FALSE(objects_exist(objects));
  auto result = dev->run(task, c, objects, 7);
  INFO(result.detail);
  CHECK(result.status == eval_status::passed);
}
