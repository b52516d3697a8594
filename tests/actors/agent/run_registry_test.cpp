// Specification of the registry of eat's runs (run_registry.hpp): where it
// lies, what entering a run leaves there, and what it lists.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actors/agent/run_registry.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;
namespace fs = std::filesystem;

namespace {

/// How many entries the registry holds.
size_t entries(const fs::path& registry) {
  return static_cast<size_t>(
    std::distance(fs::directory_iterator{registry}, fs::directory_iterator{}));
}

std::vector<fs::path> sorted(std::vector<fs::path> paths) {
  std::sort(paths.begin(), paths.end());
  return paths;
}

} // namespace

TEST_CASE("run registry: it lies in the home the password database gives "
          "eat's user, whatever HOME says") {
  // Under another HOME (sudo -H, cron) a run entered its folder where the
  // other runs' CLIs never looked (red team).
  const passwd* me = ::getpwuid(::geteuid());
  if (me == nullptr || me->pw_dir == nullptr || me->pw_dir[0] != '/') {
    WARN("eat's user has no home in the password database");
    return;
  }
  auto expected = fs::path{me->pw_dir} / ".local/state/eat/runs";
  CHECK(run_registry_dir() == expected);
  test::scoped_env home{"HOME", "/home/someone-else"};
  test::scoped_env state{"XDG_STATE_HOME", "/var/state"};
  CHECK(run_registry_dir() == expected);
  test::scoped_env no_home{"HOME", std::nullopt};
  CHECK(run_registry_dir() == expected);
}

TEST_CASE("run registry: a run entered twice has one entry, the folder is "
          "its owner's alone, and both runs are listed") {
  test::temp_dir tmp;
  auto registry = tmp.path() / "state" / "eat" / "runs";
  auto a = tmp.path() / "a";
  auto b = tmp.path() / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  CHECK(register_run(registry, a).empty());
  CHECK(register_run(registry, b).empty());
  CHECK(register_run(registry, a).empty());
  CHECK(entries(registry) == 2);
  struct stat st;
  REQUIRE(::stat(registry.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(sorted(registered_runs(registry)) == std::vector<fs::path>{a, b});
}

TEST_CASE("run registry: a folder whose name holds a newline is listed as "
          "it is") {
  test::temp_dir tmp;
  auto registry = tmp.path() / "runs";
  auto odd = tmp.path() / "a\nb";
  fs::create_directories(odd);
  fs::create_directories(tmp.path() / "a");
  REQUIRE(register_run(registry, odd).empty());
  CHECK(registered_runs(registry) == std::vector<fs::path>{odd});
}

TEST_CASE("run registry: a run whose folder is gone is not listed, and its "
          "entry goes when another run is entered") {
  test::temp_dir tmp;
  auto registry = tmp.path() / "runs";
  auto a = tmp.path() / "a";
  auto b = tmp.path() / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  REQUIRE(register_run(registry, a).empty());
  fs::remove(a);
  CHECK(registered_runs(registry).empty());
  CHECK(entries(registry) == 1);
  REQUIRE(register_run(registry, b).empty());
  CHECK(entries(registry) == 1);
  CHECK(registered_runs(registry) == std::vector<fs::path>{b});
}

TEST_CASE("run registry: entries that hold no absolute path are skipped, "
          "and a missing registry lists nothing") {
  test::temp_dir tmp;
  auto registry = tmp.path() / "runs";
  CHECK(registered_runs(registry).empty());
  fs::create_directories(registry);
  std::ofstream{registry / "relative"} << "a\n";
  std::ofstream{registry / "empty"};
  std::ofstream{registry / "binary"} << std::string{"\0\x01/", 3};
  CHECK(registered_runs(registry).empty());
}

TEST_CASE("run registry: a registry that cannot be made says why") {
  test::temp_dir tmp;
  std::ofstream{tmp.path() / "file"} << "not a folder\n";
  CHECK_THAT(register_run(tmp.path() / "file" / "runs", tmp.path()),
    Catch::StartsWith(
      "cannot make " + (tmp.path() / "file" / "runs").string() + ": "));
}
