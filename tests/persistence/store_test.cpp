// Specification of the store: creation, meta values, the schema version rule,
// and refusing what is not an eat store.

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/store.hpp"
#include "tests/persistence/raw_lmdb.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/persistence/value_of.hpp"

namespace fs = std::filesystem;
using eat::persistence::store;
using eat::persistence::store_options;
using eat::test::value_of;

namespace {

std::string read_file(const fs::path& file) {
  std::ifstream in{file, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

void write_file(const fs::path& file, const std::string& bytes) {
  std::ofstream out{file, std::ios::binary | std::ios::trunc};
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng{seed};
  std::string out(n, '\0');
  for (auto& c : out)
    c = static_cast<char>(rng() & 0xff);
  return out;
}

/// Makes a store in `dir` holding meta values of about `bytes` in total,
/// written in one transaction.
void make_store(const fs::path& dir, size_t bytes) {
  auto s = store::open(dir);
  REQUIRE(s);
  auto meta = (*s)->handle(eat::persistence::db::meta);
  auto filled = (*s)->update([&](eat::persistence::txn& t) {
    caf::expected<void> ok = caf::unit;
    for (size_t i = 0; ok && i * 1000 < bytes; ++i)
      ok = t.put(meta, "key" + std::to_string(i), std::string(1000, 'x'));
    return ok;
  });
  REQUIRE(filled);
}

} // namespace

TEST_CASE("a new store records schema version 1") {
  eat::test::temp_dir tmp;
  auto s = store::open(tmp.path() / "store");
  REQUIRE(s);
  auto version = (*s)->get_meta("schema_version");
  REQUIRE(version);
  REQUIRE(*version);
  CHECK(eat::wire::decode<uint64_t>(**version) == uint64_t{1});
}

TEST_CASE("meta values round-trip and survive reopening") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  std::string binary{"a\0b\xff", 4};
  {
    auto s = store::open(dir);
    REQUIRE(s);
    REQUIRE((*s)->put_meta("run_id", "r-42"));
    REQUIRE((*s)->put_meta("blob", binary));
    REQUIRE((*s)->put_meta("run_id", "r-43"));
    auto missing = (*s)->get_meta("nothing");
    REQUIRE(missing);
    CHECK_FALSE(*missing);
  }
  auto s = store::open(dir);
  REQUIRE(s);
  CHECK(
    value_of((*s)->get_meta("run_id")) == std::optional<std::string>{"r-43"});
  CHECK(value_of((*s)->get_meta("blob")) == std::optional<std::string>{binary});
}

TEST_CASE("put_meta refuses the reserved schema_version key") {
  eat::test::temp_dir tmp;
  auto s = store::open(tmp.path() / "store");
  REQUIRE(s);
  auto put = (*s)->put_meta("schema_version", eat::wire::encode(uint64_t{2}));
  REQUIRE_FALSE(put);
  CHECK(eat::code_of(put.error()) == eat::error::store_failure);
  CHECK(eat::wire::decode<uint64_t>(*value_of((*s)->get_meta("schema_version")))
        == uint64_t{1});
}

TEST_CASE("an LMDB error names the operation and LMDB's reason") {
  eat::test::temp_dir tmp;
  auto s = store::open(tmp.path() / "store");
  REQUIRE(s);
  auto put = (*s)->put_meta("", "empty keys are invalid in LMDB");
  REQUIRE_FALSE(put);
  CHECK(eat::code_of(put.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(put.error()),
    Catch::Contains(
      "mdb_put failed in store at " + (tmp.path() / "store").string())
      && Catch::Contains("MDB_BAD_VALSIZE"));
}

TEST_CASE("a store with another schema version is refused") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  REQUIRE(store::open(dir));
  eat::test::raw_put(
    dir, "meta", "schema_version", eat::wire::encode(uint64_t{2}));
  auto read_only = GENERATE(false, true);
  auto s = store::open(dir, store_options{.read_only = read_only});
  REQUIRE_FALSE(s);
  CHECK(eat::code_of(s.error()) == eat::error::store_version_mismatch);
  CHECK(eat::render(s.error())
        == "store_version_mismatch: store at " + dir.string()
             + " has schema version 2, this eat reads version 1");
}

TEST_CASE("a store whose schema_version is not a number is refused") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  REQUIRE(store::open(dir));
  eat::test::raw_put(dir, "meta", "schema_version", "one");
  auto s = store::open(dir);
  REQUIRE_FALSE(s);
  CHECK(eat::code_of(s.error()) == eat::error::store_version_mismatch);
  CHECK_THAT(
    eat::render(s.error()), Catch::Contains(dir.string())
                              && Catch::Contains("unreadable schema_version"));
}

TEST_CASE("an LMDB environment without schema_version is not an eat store") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  SECTION("data in the main database") {
    eat::test::raw_put(dir, nullptr, "someone", "else's data");
  }
  SECTION("a meta database without schema_version") {
    eat::test::raw_put(dir, "meta", "run_id", "r-1");
  }
  auto s = store::open(dir);
  REQUIRE_FALSE(s);
  CHECK(eat::code_of(s.error()) == eat::error::store_version_mismatch);
  CHECK_THAT(eat::render(s.error()),
    Catch::Contains(dir.string()) && Catch::Contains("not an eat store"));
}

TEST_CASE("an empty LMDB environment becomes a new store") {
  // What a creation interrupted before the schema was written leaves behind.
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  eat::test::raw_create(dir);
  REQUIRE(fs::file_size(dir / "data.mdb") > 0);
  {
    auto ro = store::open(dir, store_options{.read_only = true});
    REQUIRE_FALSE(ro);
    CHECK(eat::code_of(ro.error()) == eat::error::store_version_mismatch);
    CHECK_THAT(eat::render(ro.error()), Catch::Contains("never initialised"));
  }
  REQUIRE(store::open(dir));
  auto s = store::open(dir, store_options{.read_only = true});
  REQUIRE(s);
  auto version = (*s)->get_meta("schema_version");
  REQUIRE(version);
  REQUIRE(*version);
  CHECK(eat::wire::decode<uint64_t>(**version) == uint64_t{1});
}

TEST_CASE("a foreign file named data.mdb is refused and left untouched") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  fs::create_directories(dir);
  auto size = GENERATE(size_t{100}, size_t{5000}, size_t{65536});
  auto foreign = random_bytes(size, 7);
  write_file(dir / "data.mdb", foreign);
  auto read_only = GENERATE(false, true);
  auto s = store::open(dir, store_options{.read_only = read_only});
  REQUIRE_FALSE(s);
  CHECK(eat::code_of(s.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(s.error()), Catch::Contains(dir.string()));
  CHECK(read_file(dir / "data.mdb") == foreign);
}

TEST_CASE("a truncated store is refused instead of crashing") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  make_store(dir, 200'000);
  auto full = read_file(dir / "data.mdb");
  REQUIRE(full.size() > 100'000);
  auto keep = GENERATE(
    size_t{0}, size_t{100}, size_t{6000}, size_t{3 * 4096}, size_t{100'000});
  write_file(dir / "data.mdb", full.substr(0, keep));
  auto read_only = GENERATE(false, true);
  INFO("kept " << keep << " bytes, read_only " << read_only);
  auto s = store::open(dir, store_options{.read_only = read_only});
  REQUIRE_FALSE(s);
  CHECK(eat::code_of(s.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(s.error()), Catch::Contains(dir.string()));
}

TEST_CASE("a store whose meta pages record a damaged map size still opens") {
  // It said "mdb_env_open failed ...: Cannot allocate memory": LMDB mapped
  // the size the meta page records, here 2^64 - 1 bytes.
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  make_store(dir, 20'000);
  auto bytes = read_file(dir / "data.mdb");
  // Two meta pages of 4096 bytes: a 16-byte page header, then the magic
  // 0xBEEFC0DE, the version, the map address and the map size.
  for (size_t page : {size_t{0}, size_t{4096}}) {
    REQUIRE(bytes.size() > page + 40);
    REQUIRE(bytes.substr(page + 16, 4) == std::string{"\xde\xc0\xef\xbe"});
    bytes.replace(page + 32, 8, std::string(8, '\xff'));
  }
  write_file(dir / "data.mdb", bytes);
  auto read_only = GENERATE(false, true);
  INFO("read_only " << read_only);
  auto s = store::open(dir, store_options{.read_only = read_only});
  REQUIRE(s);
  auto meta = (*s)->handle(eat::persistence::db::meta);
  auto kept = value_of(
    (*s)->view([&](eat::persistence::txn& t) -> caf::expected<std::string> {
      auto v = t.get(meta, "key3");
      if (!v)
        return v.error();
      return *v ? std::string{**v} : std::string{"(missing)"};
    }));
  CHECK(kept == std::string(1000, 'x'));
}

TEST_CASE("a read-only open of a missing store fails and creates nothing") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "missing";
  auto s = store::open(dir, store_options{.read_only = true});
  REQUIRE_FALSE(s);
  CHECK(eat::code_of(s.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(s.error()), Catch::Contains(dir.string()));
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("a read-only store reads but refuses writes") {
  eat::test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  {
    auto s = store::open(dir);
    REQUIRE(s);
    REQUIRE((*s)->put_meta("run_id", "r-1"));
  }
  auto s = store::open(dir, store_options{.read_only = true});
  REQUIRE(s);
  CHECK((*s)->read_only());
  CHECK(
    value_of((*s)->get_meta("run_id")) == std::optional<std::string>{"r-1"});
  auto put = (*s)->put_meta("run_id", "r-2");
  REQUIRE_FALSE(put);
  CHECK(eat::code_of(put.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(put.error()), Catch::Contains("read-only"));
}

TEST_CASE("a store cannot be opened where a regular file stands") {
  eat::test::temp_dir tmp;
  auto file = tmp.path() / "not-a-dir";
  write_file(file, "hello");
  auto s = store::open(file);
  REQUIRE_FALSE(s);
  CHECK(eat::code_of(s.error()) == eat::error::store_failure);
  CHECK_THAT(eat::render(s.error()), Catch::Contains(file.string()));
}
