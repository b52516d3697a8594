// Specification of the export of a file namespace as a directory tree: the
// latest version of every file at its path, only into an absent or empty
// directory, and never outside it.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/export_tree.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/fs_path.hpp"
#include "persistence/store.hpp"
#include "tests/persistence/raw_lmdb.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/persistence/value_of.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using eat::persistence::export_tree;
using eat::persistence::file_tree;
using eat::persistence::store;
using eat::test::value_of;

namespace {

std::string read_file(const fs::path& file) {
  std::ifstream in{file, std::ios::binary};
  REQUIRE(in);
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// Number of regular files below `dir`.
size_t count_files(const fs::path& dir) {
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator{dir})
    n += e.is_regular_file() ? 1 : 0;
  return n;
}

/// A store with a file tree in a temporary directory; exports go to out().
struct export_fixture {
  eat::test::temp_dir tmp;
  std::unique_ptr<store> s;
  std::unique_ptr<file_tree> tree;

  export_fixture() {
    open();
  }

  fs::path dir() const {
    return tmp.path() / "store";
  }

  fs::path out() const {
    return tmp.path() / "export";
  }

  void open() {
    s = value_of(store::open(dir()));
    tree = std::make_unique<file_tree>(*s);
  }

  void close() {
    tree.reset();
    s.reset();
  }

  void put(std::string_view path, std::string_view bytes) {
    value_of(tree->put(path, bytes, "tester"));
  }
};

} // namespace

TEST_CASE("export writes the latest version of every file at its path") {
  export_fixture f;
  std::string binary{"\0\x01\xff bytes", 9};
  f.put("/learning.md", "old lessons");
  f.put("/learning.md", "lessons");
  f.put("/teams/t1/notes.md", "notes");
  f.put("/teams/t1/candidates/c1/kernel.cpp", binary);
  f.put("/teams/t1/candidates/c1/build.log", "");
  CHECK(value_of(export_tree(*f.tree, f.out())) == 4);
  CHECK(read_file(f.out() / "learning.md") == "lessons");
  CHECK(read_file(f.out() / "teams/t1/notes.md") == "notes");
  CHECK(read_file(f.out() / "teams/t1/candidates/c1/kernel.cpp") == binary);
  CHECK(read_file(f.out() / "teams/t1/candidates/c1/build.log").empty());
  CHECK(count_files(f.out()) == 4);
}

TEST_CASE("export of an empty namespace makes an empty directory") {
  export_fixture f;
  CHECK(value_of(export_tree(*f.tree, f.out() / "nested/")) == 0);
  CHECK(fs::is_directory(f.out() / "nested"));
  CHECK(fs::is_empty(f.out() / "nested"));
}

TEST_CASE("export goes into an existing empty directory") {
  export_fixture f;
  f.put("/a/b", "b");
  fs::create_directory(f.out());
  CHECK(value_of(export_tree(*f.tree, f.out())) == 1);
  CHECK(read_file(f.out() / "a/b") == "b");
}

TEST_CASE("export refuses a directory that is not empty") {
  export_fixture f;
  f.put("/a", "new");
  fs::create_directory(f.out());
  std::ofstream{f.out() / "a"} << "old";
  auto got = export_tree(*f.tree, f.out());
  REQUIRE_FALSE(got);
  CHECK(eat::code_of(got.error()) == eat::error::invalid_arguments);
  CHECK_THAT(eat::render(got.error()), Contains("is not empty"));
  CHECK(read_file(f.out() / "a") == "old");
}

TEST_CASE("export refuses a target that is a file") {
  export_fixture f;
  f.put("/a", "new");
  std::ofstream{f.out()} << "a file";
  auto got = export_tree(*f.tree, f.out());
  REQUIRE_FALSE(got);
  CHECK(eat::code_of(got.error()) == eat::error::invalid_arguments);
  CHECK_THAT(eat::render(got.error()), Contains("is not a directory"));
}

TEST_CASE("export refuses a stored path that would leave the directory") {
  export_fixture f;
  f.put("/a", "payload");
  f.close();
  // Only damage or a foreign writer can store such a path: the file tree
  // refuses it. The record itself is otherwise valid.
  eat::persistence::file_version v{
    1, eat::persistence::blob_hash("payload"), 7, 0, "intruder"};
  eat::test::raw_put(f.dir(), "files",
    eat::persistence::encode_file_key("/x/../../escaped", 1),
    eat::wire::encode(v));
  f.open();
  auto got = export_tree(*f.tree, f.out() / "inner");
  REQUIRE_FALSE(got);
  CHECK(eat::code_of(got.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(got.error()),
    Contains("file '/x/../../escaped' in the store would be exported to "));
  CHECK_THAT(eat::render(got.error()), Contains("refused"));
  CHECK_FALSE(fs::exists(f.out() / "escaped"));
  CHECK_FALSE(fs::exists(f.out() / "inner"));
}
