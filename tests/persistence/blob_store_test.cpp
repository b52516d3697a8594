// Specification of the blob store: bytes under their SHA-256, stored once,
// read back by hex hash, and damaged blobs found by verify.

#include <catch2/catch.hpp>

#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/protocol/error.hpp"
#include "persistence/blob_store.hpp"
#include "persistence/store.hpp"
#include "tests/persistence/raw_lmdb.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/persistence/value_of.hpp"

using Catch::Matchers::Contains;
using eat::persistence::blob_hash;
using eat::persistence::blob_store;
using eat::persistence::db;
using eat::persistence::store;
using eat::persistence::txn;
using eat::test::raw_key;
using eat::test::value_of;

namespace {

constexpr const char* abc_sha256
  = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* empty_sha256
  = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// A store in a temporary directory, with a blob store on it.
struct blob_fixture {
  eat::test::temp_dir tmp;
  std::unique_ptr<store> s;
  std::unique_ptr<blob_store> blobs;

  blob_fixture() {
    open();
  }

  std::filesystem::path dir() const {
    return tmp.path() / "store";
  }

  void open() {
    s = value_of(store::open(dir()));
    blobs = std::make_unique<blob_store>(*s);
  }

  void close() {
    blobs.reset();
    s.reset();
  }

  std::string put(const std::string& bytes) {
    return value_of(s->update([&](txn& t) {
      return blobs->put_in(t, bytes);
    }));
  }

  size_t count() {
    return value_of(s->view([&](txn& t) {
      return t.entries(s->handle(db::blobs));
    }));
  }

  std::vector<std::string> verify() {
    return value_of(s->view([&](txn& t) {
      return blobs->verify(t);
    }));
  }
};

} // namespace

TEST_CASE("a blob is named by the SHA-256 of its bytes") {
  CHECK(blob_hash("abc") == abc_sha256);
  CHECK(blob_hash("") == empty_sha256);
  blob_fixture f;
  CHECK(f.put("abc") == abc_sha256);
  CHECK(f.put("") == empty_sha256);
}

TEST_CASE("a blob reads back by its hash, in upper or lower case") {
  blob_fixture f;
  const std::string bytes{"binary\0bytes\xff", 13};
  auto hash = f.put(bytes);
  CHECK(value_of(f.blobs->get(hash)) == bytes);
  std::string upper;
  for (char c : hash)
    upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(value_of(f.blobs->get(upper)) == bytes);
}

TEST_CASE("identical bytes are stored once") {
  blob_fixture f;
  auto first = f.put("same bytes");
  auto second = f.put("same bytes");
  CHECK(first == second);
  CHECK(f.count() == 1);
  f.put("other bytes");
  CHECK(f.count() == 2);
}

TEST_CASE("an unknown hash has no blob") {
  blob_fixture f;
  f.put("abc");
  CHECK(value_of(f.blobs->get(empty_sha256)) == std::nullopt);
}

TEST_CASE("a name that is not 64 hex digits is refused") {
  blob_fixture f;
  for (const std::string& bad : std::vector<std::string>{
         "", "abc", std::string(64, 'g'), std::string(abc_sha256) + "00"}) {
    auto got = f.blobs->get(bad);
    REQUIRE_FALSE(got);
    CHECK(eat::code_of(got.error()) == eat::error::invalid_arguments);
    CHECK_THAT(eat::render(got.error()), Contains("64 hex digits"));
  }
}

TEST_CASE("a blob written in a transaction that fails is not kept") {
  blob_fixture f;
  auto failed = f.s->update([&](txn& t) -> caf::expected<std::string> {
    auto hash = f.blobs->put_in(t, "abc");
    REQUIRE(hash);
    return eat::make_error(eat::error::agent_failed, "caller gives up");
  });
  REQUIRE_FALSE(failed);
  CHECK(f.count() == 0);
  CHECK(value_of(f.blobs->get(abc_sha256)) == std::nullopt);
}

TEST_CASE("verify finds nothing wrong with intact blobs") {
  blob_fixture f;
  f.put("abc");
  f.put("");
  f.put(std::string(100000, 'x'));
  CHECK(f.verify().empty());
}

TEST_CASE("verify reports a blob whose bytes were altered on disk") {
  blob_fixture f;
  f.put("abc");
  f.put("intact");
  f.close();
  eat::test::raw_put(f.dir(), "blobs", raw_key(abc_sha256), "abd");
  f.open();
  auto problems = f.verify();
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Contains(std::string{"blob "} + abc_sha256));
  CHECK_THAT(problems[0], Contains("hashes to " + blob_hash("abd")));
}

TEST_CASE("verify reports a key that is not a SHA-256") {
  blob_fixture f;
  f.put("abc");
  f.close();
  eat::test::raw_put(f.dir(), "blobs", "short", "bytes");
  f.open();
  auto problems = f.verify();
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Contains("blob key 73686f7274 has 5 bytes"));
}

TEST_CASE("storing the right bytes again repairs an altered blob") {
  blob_fixture f;
  f.put("abc");
  f.close();
  eat::test::raw_put(f.dir(), "blobs", raw_key(abc_sha256), "abd");
  f.open();
  REQUIRE(f.verify().size() == 1);
  CHECK(f.put("abc") == abc_sha256);
  CHECK(f.verify().empty());
  CHECK(value_of(f.blobs->get(abc_sha256)) == "abc");
}
