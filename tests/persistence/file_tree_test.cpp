// Specification of the versioned file namespace: path rules, versions from 1
// per path, shared blobs, listings, writes inside a caller's transaction,
// and damage behind the store's back reported precisely.

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/event_log.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/fs_path.hpp"
#include "persistence/store.hpp"
#include "tests/persistence/raw_lmdb.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/persistence/value_of.hpp"

using Catch::Matchers::Contains;
using eat::persistence::blob_hash;
using eat::persistence::db;
using eat::persistence::dir_entry;
using eat::persistence::file_tree;
using eat::persistence::normalize_fs_path;
using eat::persistence::store;
using eat::persistence::txn;
using eat::test::raw_key;
using eat::test::value_of;

namespace {

constexpr int64_t fixed_now = 1'700'000'000'123;

int64_t fixed_clock() {
  return fixed_now;
}

/// A store in a temporary directory, with a file tree on it.
struct tree_fixture {
  eat::test::temp_dir tmp;
  std::unique_ptr<store> s;
  std::unique_ptr<file_tree> tree;

  tree_fixture() {
    open();
  }

  std::filesystem::path dir() const {
    return tmp.path() / "store";
  }

  void open() {
    s = value_of(store::open(dir()));
    tree = std::make_unique<file_tree>(*s, fixed_clock);
  }

  void close() {
    tree.reset();
    s.reset();
  }

  uint64_t put(std::string_view path, std::string_view bytes) {
    return value_of(tree->put(path, bytes, "tester"));
  }

  size_t count(db x) {
    return value_of(s->view([&](txn& t) {
      return t.entries(s->handle(x));
    }));
  }
};

/// Checks that `x` failed with `code` and returns the error's text.
template<class T>
std::string failure(const caf::expected<T>& x, eat::error code) {
  REQUIRE_FALSE(x);
  CHECK(eat::code_of(x.error()) == code);
  return eat::render(x.error());
}

std::vector<std::string> names(const std::vector<dir_entry>& entries) {
  std::vector<std::string> out;
  for (auto& e : entries)
    out.push_back(e.is_dir ? e.name + "/" : e.name);
  return out;
}

using strings = std::vector<std::string>;

} // namespace

// -- paths --------------------------------------------------------------------

TEST_CASE("namespace paths are absolute and lose a trailing slash") {
  CHECK(value_of(normalize_fs_path("/learning.md")) == "/learning.md");
  CHECK(value_of(normalize_fs_path("/teams/t1/")) == "/teams/t1");
  CHECK(value_of(normalize_fs_path("/")) == "/");
  CHECK(value_of(normalize_fs_path("/a b/\xc3\xa9.md")) == "/a b/\xc3\xa9.md");
}

TEST_CASE("every class of bad path is refused, naming the rule") {
  auto why = [](std::string_view p) {
    return failure(normalize_fs_path(p), eat::error::invalid_arguments);
  };
  CHECK(why("a/b")
        == "invalid_arguments: path 'a/b' is not absolute: namespace paths "
           "start with '/'");
  CHECK(why("x/../y")
        == "invalid_arguments: path 'x/../y' leaves the namespace: '..' is "
           "not allowed");
  CHECK_THAT(why("/a/.."), Contains("'..' is not allowed"));
  CHECK_THAT(why(""), Contains("is empty"));
  CHECK_THAT(why("/a/./b"), Contains("has a '.' component"));
  CHECK_THAT(why("/a//b"), Contains("has an empty component"));
  CHECK_THAT(why("//"), Contains("has an empty component"));
  CHECK_THAT(why(std::string_view{"/a\0b", 4}), Contains("'/a\\x00b'"));
  CHECK_THAT(why(std::string_view{"/a\0b", 4}), Contains("control character"));
  CHECK_THAT(why("/a\x1b[31m"), Contains("control character"));
  CHECK_THAT(why("/a\\b"), Contains("contains a backslash"));
}

TEST_CASE("components and paths have length limits") {
  auto long_name = std::string(255, 'n');
  CHECK(normalize_fs_path("/" + long_name));
  auto too_long = failure(
    normalize_fs_path("/" + long_name + "n"), eat::error::invalid_arguments);
  CHECK_THAT(too_long, Contains("a component of 256 bytes"));
  std::string path;
  while (path.size() < 4096)
    path += "/" + std::string(99, 'p');
  path.resize(4096);
  CHECK(normalize_fs_path(path));
  CHECK_THAT(
    failure(normalize_fs_path(path + "p"), eat::error::invalid_arguments),
    Contains("4097 bytes, at most 4096"));
}

TEST_CASE("the store refuses paths longer than its key limit") {
  tree_fixture f;
  auto longest = "/" + std::string(250, 'k') + "/" + std::string(250, 'k');
  REQUIRE(longest.size() == eat::persistence::max_stored_path);
  CHECK(f.put(longest, "fits") == 1);
  CHECK(value_of(f.tree->get(longest)) == "fits");
  CHECK_THAT(failure(f.tree->put(longest + "k", "x", "me"),
               eat::error::invalid_arguments),
    Contains("at most 502 bytes"));
}

TEST_CASE("bad paths are refused by every operation") {
  tree_fixture f;
  for (std::string_view bad : {"relative", "/a/../b", "/a/./b", "/a//b"}) {
    failure(f.tree->put(bad, "x", "me"), eat::error::invalid_arguments);
    failure(f.tree->get(bad), eat::error::invalid_arguments);
    failure(f.tree->log(bad), eat::error::invalid_arguments);
    failure(f.tree->list(bad), eat::error::invalid_arguments);
  }
  CHECK_THAT(
    failure(f.tree->put("/", "x", "me"), eat::error::invalid_arguments),
    Contains("root directory, not a file"));
  CHECK(f.count(db::files) == 0);
}

// -- versions -----------------------------------------------------------------

TEST_CASE("each write of a path is a new version, counted from 1 per path") {
  tree_fixture f;
  CHECK(f.put("/learning.md", "one") == 1);
  CHECK(f.put("/learning.md", "two") == 2);
  CHECK(f.put("/teams/t1/notes.md", "notes") == 1);
  CHECK(f.put("/learning.md/", "three") == 3);
  CHECK(value_of(f.tree->get("/learning.md")) == "three");
  CHECK(value_of(f.tree->get("/learning.md", 0)) == "three");
  CHECK(value_of(f.tree->get("/learning.md", 1)) == "one");
  CHECK(value_of(f.tree->get("/learning.md", 2)) == "two");
  CHECK(value_of(f.tree->get("/teams/t1/notes.md")) == "notes");
}

TEST_CASE("bytes of any kind and size read back unchanged") {
  tree_fixture f;
  std::string binary;
  for (int i = 0; i < 256 * 40; ++i)
    binary += static_cast<char>(i % 256);
  f.put("/bin", binary);
  f.put("/empty", "");
  CHECK(value_of(f.tree->get("/bin")) == binary);
  CHECK(value_of(f.tree->get("/empty")).empty());
}

TEST_CASE("the log lists every version oldest first") {
  tree_fixture f;
  f.put("/teams/t1/notes.md", "a");
  REQUIRE(f.tree->put("/teams/t1/notes.md", "bbb", "agent a2"));
  auto log = value_of(f.tree->log("/teams/t1/notes.md"));
  REQUIRE(log.size() == 2);
  CHECK(log[0].version == 1);
  CHECK(log[0].size == 1);
  CHECK(log[0].blob == blob_hash("a"));
  CHECK(log[0].author == "tester");
  CHECK(log[1].version == 2);
  CHECK(log[1].size == 3);
  CHECK(log[1].blob == blob_hash("bbb"));
  CHECK(log[1].author == "agent a2");
  CHECK(log[1].unix_ms == fixed_now);
}

TEST_CASE("identical bytes in two files share one blob") {
  tree_fixture f;
  f.put("/teams/t1/candidates/c1/kernel.cpp", "int main() {}");
  f.put("/teams/t2/candidates/c9/kernel.cpp", "int main() {}");
  f.put("/teams/t1/candidates/c1/kernel.cpp", "int main() {}");
  CHECK(f.count(db::files) == 3);
  CHECK(f.count(db::blobs) == 1);
  f.put("/teams/t1/candidates/c1/build.log", "ok");
  CHECK(f.count(db::blobs) == 2);
}

TEST_CASE("a missing path or version is an error naming it") {
  tree_fixture f;
  f.put("/a/b", "x");
  CHECK(failure(f.tree->get("/nope"), eat::error::invalid_arguments)
        == "invalid_arguments: no file '/nope' in the namespace");
  CHECK(failure(f.tree->get("/a/b", 2), eat::error::invalid_arguments)
        == "invalid_arguments: file '/a/b' has no version 2 (its latest is 1)");
  CHECK_THAT(failure(f.tree->get("/a"), eat::error::invalid_arguments),
    Contains("'/a' is a directory, not a file"));
  CHECK_THAT(failure(f.tree->log("/nope"), eat::error::invalid_arguments),
    Contains("no file '/nope'"));
}

TEST_CASE("a path cannot be both a file and a directory") {
  tree_fixture f;
  f.put("/a/b", "x");
  CHECK_THAT(
    failure(f.tree->put("/a", "y", "me"), eat::error::invalid_arguments),
    Contains("cannot write '/a': it is a directory"));
  CHECK_THAT(
    failure(f.tree->put("/a/b/c", "y", "me"), eat::error::invalid_arguments),
    Contains("cannot write '/a/b/c': '/a/b' is a file"));
  CHECK(f.put("/a/bc", "neighbour") == 1);
  CHECK(f.put("/a/b.d/c", "neighbour") == 1);
}

// -- listings -----------------------------------------------------------------

TEST_CASE("the root of a new store is an empty directory") {
  tree_fixture f;
  CHECK(value_of(f.tree->list("/")).empty());
  CHECK(value_of(f.tree->all()).empty());
}

TEST_CASE("a listing shows immediate children sorted by name") {
  tree_fixture f;
  f.put("/teams/t1/notes.md", "n");
  f.put("/teams/t1/candidates/c1/kernel.cpp", "k");
  f.put("/teams/t2/notes.md", "n");
  f.put("/learning.md", "v1");
  f.put("/learning.md", "v2!");
  f.put("/b.txt", "b");
  f.put("/b/x", "x");
  CHECK(names(value_of(f.tree->list("/")))
        == strings{"b/", "b.txt", "learning.md", "teams/"});
  CHECK(names(value_of(f.tree->list("/teams"))) == strings{"t1/", "t2/"});
  CHECK(names(value_of(f.tree->list("/teams/t1/")))
        == strings{"candidates/", "notes.md"});
  auto root = value_of(f.tree->list("/"));
  auto learning = root[2];
  CHECK(learning.name == "learning.md");
  CHECK_FALSE(learning.is_dir);
  CHECK(learning.version == 2);
  CHECK(learning.size == 3);
  CHECK(root[0].is_dir);
  CHECK(root[0].version == 0);
}

TEST_CASE("a directory does not list its name-prefixed neighbours") {
  tree_fixture f;
  f.put("/a/b/one", "1");
  f.put("/a/bc/two", "2");
  f.put("/a/b-c", "3");
  f.put("/a/b0", "4");
  CHECK(names(value_of(f.tree->list("/a/b"))) == strings{"one"});
  CHECK(
    names(value_of(f.tree->list("/a"))) == strings{"b/", "b-c", "b0", "bc/"});
}

TEST_CASE("listing a missing directory or a file is an error") {
  tree_fixture f;
  f.put("/a/b", "x");
  CHECK(failure(f.tree->list("/nope"), eat::error::invalid_arguments)
        == "invalid_arguments: no directory '/nope' in the namespace");
  CHECK_THAT(failure(f.tree->list("/a/b"), eat::error::invalid_arguments),
    Contains("'/a/b' is a file, not a directory"));
}

TEST_CASE("all lists every file with its latest version, by path") {
  tree_fixture f;
  f.put("/z", "z");
  f.put("/a/b", "1");
  f.put("/a/b", "22");
  f.put("/a.md", "a");
  auto all = value_of(f.tree->all());
  REQUIRE(all.size() == 3);
  CHECK(all[0].first == "/a.md");
  CHECK(all[1].first == "/a/b");
  CHECK(all[1].second.version == 2);
  CHECK(all[1].second.size == 2);
  CHECK(all[1].second.blob == blob_hash("22"));
  CHECK(all[2].first == "/z");
}

// -- transactions and threads -------------------------------------------------

TEST_CASE("put_in commits together with the caller's transaction") {
  tree_fixture f;
  eat::persistence::event_log log{*f.s};
  auto version = f.s->update([&](txn& t) -> caf::expected<uint64_t> {
    std::vector<eat::event> events(1);
    events[0].kind = eat::event_kind::candidate_submitted;
    if (auto seqs = log.append_in(t, events); !seqs)
      return seqs.error();
    return f.tree->put_in(
      t, "/teams/t1/candidates/c1/kernel.cpp", "src", "team t1");
  });
  CHECK(value_of(std::move(version)) == 1);
  CHECK(value_of(log.last_seq()) == 1);
  CHECK(value_of(f.tree->get("/teams/t1/candidates/c1/kernel.cpp")) == "src");
}

TEST_CASE("a failed caller transaction leaves no file and no blob") {
  tree_fixture f;
  f.put("/kept", "old");
  auto failed = f.s->update([&](txn& t) -> caf::expected<uint64_t> {
    REQUIRE(f.tree->put_in(t, "/kept", "new", "me") == uint64_t{2});
    REQUIRE(f.tree->put_in(t, "/lost", "lost", "me") == uint64_t{1});
    return eat::make_error(eat::error::agent_failed, "the caller gives up");
  });
  CHECK(failure(failed, eat::error::agent_failed)
        == "agent_failed: the caller gives up");
  CHECK(value_of(f.tree->get("/kept")) == "old");
  failure(f.tree->get("/lost"), eat::error::invalid_arguments);
  CHECK(f.count(db::files) == 1);
  CHECK(f.count(db::blobs) == 1);
}

TEST_CASE("readers on another thread see whole versions while one writes") {
  tree_fixture f;
  auto content = [](uint64_t v) {
    return "v" + std::to_string(v) + ":"
           + std::string(v * 37 % 1000, static_cast<char>('a' + v % 26));
  };
  f.put("/f", content(1));
  std::atomic<bool> writer_done{false};
  std::vector<std::string> problems;
  int reads = 0;
  std::thread reader([&] {
    uint64_t last = 1;
    for (; !writer_done || reads < 50; ++reads) {
      auto bytes = f.tree->get("/f");
      if (!bytes) {
        problems.push_back(eat::render(bytes.error()));
        continue;
      }
      auto v = std::stoull(bytes->substr(1, bytes->find(':') - 1));
      if (*bytes != content(v) || v < last)
        problems.push_back("read version " + std::to_string(v) + " after "
                           + std::to_string(last) + " as " + *bytes);
      last = v;
    }
  });
  for (uint64_t v = 2; v <= 200; ++v)
    REQUIRE(f.tree->put("/f", content(v), "writer") == v);
  writer_done = true;
  reader.join();
  CHECK(reads >= 50);
  CHECK(problems == strings{});
  CHECK(value_of(f.tree->get("/f")) == content(200));
}

// -- damage -------------------------------------------------------------------

TEST_CASE("a consistent namespace verifies without problems") {
  tree_fixture f;
  f.put("/a", "1");
  f.put("/a", "2");
  f.put("/b/c", "1");
  CHECK(value_of(f.tree->verify()) == strings{});
}

TEST_CASE("a blob deleted behind the store's back is reported precisely") {
  tree_fixture f;
  f.put("/a", "first");
  f.put("/a", "second");
  f.put("/b", "second");
  f.close();
  auto hash = blob_hash("second");
  eat::test::raw_delete(f.dir(), "blobs", raw_key(hash));
  f.open();
  CHECK(value_of(f.tree->get("/a", 1)) == "first");
  auto got = failure(f.tree->get("/a"), eat::error::store_failure);
  CHECK(got
        == "store_failure: blob " + hash + " of file '/a' version 2 is "
             + "missing from store at " + f.dir().string());
  CHECK(value_of(f.tree->verify())
        == strings{"file '/a' version 2: blob " + hash + " is missing",
          "file '/b' version 1: blob " + hash + " is missing"});
}

TEST_CASE("a blob whose bytes were altered fails get and is reported by "
          "verify") {
  tree_fixture f;
  f.put("/a", "right");
  f.put("/b", "other");
  f.close();
  auto hash = blob_hash("right");
  eat::test::raw_put(f.dir(), "blobs", raw_key(hash), "wrong");
  f.open();
  // Same size, other bytes: read back as the file's before.
  CHECK(failure(f.tree->get("/a"), eat::error::store_failure)
        == "store_failure: blob " + hash
             + " of file '/a' version 1 does not hash to its name: the store "
               "is damaged (eat fsck lists every problem)");
  CHECK(value_of(f.tree->get("/b")) == "other");
  CHECK(value_of(f.tree->verify())
        == strings{"file '/a' version 1: blob " + hash
                   + " holds bytes whose SHA-256 is " + blob_hash("wrong")});
}

TEST_CASE("a blob of the wrong size fails get and verify") {
  tree_fixture f;
  f.put("/a", "right");
  f.close();
  auto hash = blob_hash("right");
  eat::test::raw_put(f.dir(), "blobs", raw_key(hash), "longer bytes");
  f.open();
  CHECK_THAT(failure(f.tree->get("/a"), eat::error::store_failure),
    Contains("has 12 bytes, its record says 5"));
  auto problems = value_of(f.tree->verify());
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Contains("file '/a' version 1: blob " + hash));
}

TEST_CASE("a file record that does not decode is reported by its path") {
  tree_fixture f;
  f.put("/a", "1");
  f.close();
  eat::test::raw_put(f.dir(), "files",
    eat::persistence::encode_file_key("/a", 2), "not msgpack");
  f.open();
  CHECK_THAT(failure(f.tree->get("/a"), eat::error::store_failure),
    Contains("file '/a' version 2 in store at"));
  auto problems = value_of(f.tree->verify());
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Contains("file '/a' version 2 in store at"));
  CHECK_THAT(problems[0], Contains("cannot be decoded"));
}

TEST_CASE("a record whose version differs from its key is reported") {
  tree_fixture f;
  f.put("/a", "1");
  f.close();
  eat::persistence::file_version v{7, blob_hash("1"), 1, fixed_now, "x"};
  eat::test::raw_put(f.dir(), "files",
    eat::persistence::encode_file_key("/a", 2), eat::wire::encode(v));
  f.open();
  CHECK_THAT(failure(f.tree->log("/a"), eat::error::store_failure),
    Contains("file '/a' version 2 in store at " + f.dir().string()
             + " records version 7"));
}
