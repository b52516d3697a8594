// Specification of stale reader slots: a process killed inside a read
// transaction leaves its slot behind, and the store clears it.

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include "persistence/store.hpp"
#include "tests/persistence/child_process.hpp"
#include "tests/persistence/raw_lmdb.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/persistence/value_of.hpp"

namespace fs = std::filesystem;
using eat::persistence::store;
using eat::test::child_process;
using eat::test::value_of;

namespace {

/// Forks a process that opens the environment in `dir` (in a read
/// transaction when `read`) and returns once it has.
std::unique_ptr<child_process> start_reader(const fs::path& dir, bool read) {
  auto child = std::make_unique<child_process>([&](int fd) {
    eat::test::hold_reader(dir, read, fd);
    return 0;
  });
  char byte = 0;
  REQUIRE(child->read_exact(&byte, 1));
  return child;
}

void kill_reader(std::unique_ptr<child_process> reader) {
  auto status = reader->kill_and_reap();
  REQUIRE(WIFSIGNALED(status));
}

} // namespace

TEST_CASE("check_readers clears the slot of a reader killed by SIGKILL") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  auto s = store::open(dir);
  REQUIRE(s);
  CHECK(value_of((*s)->check_readers()) == 0);
  kill_reader(start_reader(dir, true));
  CHECK(value_of((*s)->check_readers()) == 1);
  CHECK(value_of((*s)->check_readers()) == 0);
}

TEST_CASE("opening a store clears reader slots of killed processes") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  REQUIRE(store::open(dir));
  // A live process keeps the environment open, so LMDB does not reset the
  // reader table when the store opens: only the store's check clears it.
  auto holder = start_reader(dir, false);
  kill_reader(start_reader(dir, true));
  auto s = store::open(dir);
  REQUIRE(s);
  CHECK(value_of((*s)->check_readers()) == 0);
  kill_reader(std::move(holder));
}
