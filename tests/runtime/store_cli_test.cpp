// Specification of the commands that read a run's store: `eat fs`,
// `eat history` and `eat fsck`, on a run directory built in the test.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/protocol/wire.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/keys.hpp"
#include "persistence/run_writer.hpp"
#include "runtime/cli.hpp"
#include "runtime/run_dir.hpp"
#include "tests/persistence/make_event.hpp"
#include "tests/persistence/raw_lmdb.hpp"
#include "tests/runtime/cli_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace eat;

namespace {

using eat::test::eat_cli;

/// A run directory with one team, one evaluated candidate, its files, and
/// a file written twice.
struct sample_run {
  test::temp_dir tmp;
  fs::path root = tmp.path();
  fs::path dir = root / "run";

  sample_run() {
    auto rd = run_dir::create(root, "x", "[run]\n", dir);
    REQUIRE(rd);
    auto s = persistence::store::open(rd->store_dir());
    REQUIRE(s);
    auto w = persistence::run_writer::open(**s);
    REQUIRE(w);
    run_started start;
    start.run_id = "x";
    team_spawned team;
    team.team = "t1";
    candidate c;
    c.id = "t1-c0001";
    c.team = "t1";
    c.source = "kernel v1\n";
    eval_result r;
    r.candidate = c.id;
    r.status = eval_status::passed;
    r.geomean_speedup = 2.5;
    REQUIRE((*w)->commit({make_event(event_kind::run_started, start),
                           make_event(event_kind::team_spawned, team)},
      {{"/config.toml", "[run]\n", "operator"}}));
    REQUIRE((*w)->commit({make_event(event_kind::candidate_submitted, c)},
      {{"/teams/t1/candidates/t1-c0001/kernel.cpp", c.source, "t1.a1"}}));
    REQUIRE((*w)->commit({make_event(event_kind::evaluation_finished, r)},
      {{"/teams/t1/notes.md", "first notes\n", "t1"},
        {"/teams/t1/notes.md", "second notes\n", "t1"}}));
  }
};

} // namespace

TEST_CASE("eat fs ls lists a directory of the run's namespace") {
  sample_run run;
  auto root = eat_cli({"fs", "ls", run.dir.string()});
  CHECK(root.code == exit_code::ok);
  CHECK(root.out == "config.toml  (v1, 6 bytes)\nteams/\n");
  auto team = eat_cli({"fs", "ls", run.dir.string(), "/teams/t1"});
  CHECK_THAT(team.out, Catch::Contains("candidates/"));
  CHECK_THAT(team.out, Catch::Contains("notes.md  (v2, 13 bytes)"));
}

TEST_CASE("eat fs cat prints the latest version or a given one") {
  sample_run run;
  auto latest = eat_cli({"fs", "cat", run.dir.string(), "/teams/t1/notes.md"});
  CHECK(latest.code == exit_code::ok);
  CHECK(latest.out == "second notes\n");
  auto first = eat_cli({"fs", "cat", run.dir.string(), "/teams/t1/notes.md",
                        "--version", "1"});
  CHECK(first.out == "first notes\n");
  auto bad = eat_cli({"fs", "cat", run.dir.string(), "/teams/t1/notes.md",
                      "--version", "one"});
  CHECK(bad.code == exit_code::usage);
  auto outside = eat_cli({"fs", "cat", run.dir.string(), "/teams/../../etc"});
  CHECK(outside.code != exit_code::ok);
  CHECK_THAT(outside.out, Catch::Contains(".."));
  auto missing = eat_cli({"fs", "cat", run.dir.string(), "/nope.md"});
  CHECK(missing.code != exit_code::ok);
  CHECK_THAT(missing.out, Catch::Contains("/nope.md"));
}

TEST_CASE("eat fs log lists every version of a file") {
  sample_run run;
  auto log = eat_cli({"fs", "log", run.dir.string(), "/teams/t1/notes.md"});
  CHECK(log.code == exit_code::ok);
  CHECK_THAT(log.out, Catch::StartsWith("v1 "));
  CHECK_THAT(log.out, Catch::Contains("\nv2 "));
  CHECK_THAT(log.out, Catch::Contains("by t1"));
}

TEST_CASE("eat fs export writes the namespace as a plain directory tree") {
  sample_run run;
  auto out_dir = run.root / "export";
  auto r = eat_cli({"fs", "export", run.dir.string(), out_dir.string()});
  CHECK(r.code == exit_code::ok);
  CHECK_THAT(r.out, Catch::Contains("exported 3 files"));
  std::ifstream in{out_dir / "teams/t1/notes.md"};
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "second notes\n");
  auto again = eat_cli({"fs", "export", run.dir.string(), out_dir.string()});
  CHECK(again.code != exit_code::ok);
}

TEST_CASE("eat history prints the log, from an event on, or as JSON") {
  sample_run run;
  auto all = eat_cli({"history", run.dir.string()});
  CHECK(all.code == exit_code::ok);
  CHECK(std::count(all.out.begin(), all.out.end(), '\n') == 4);
  CHECK_THAT(all.out, Catch::Contains("evaluation_finished  t1-c0001 passed "
                                      "2.50x"));
  auto since = eat_cli({"history", run.dir.string(), "--since", "3"});
  CHECK_THAT(since.out, Catch::StartsWith("3  "));
  auto json = eat_cli({"history", run.dir.string(), "--since", "4", "--json"});
  CHECK_THAT(json.out, Catch::StartsWith("{\"seq\":4,"));
  CHECK_THAT(json.out, Catch::Contains("\"kind\":\"evaluation_finished\""));
  CHECK_THAT(json.out, Catch::Contains("\"candidate\":\"t1-c0001\""));
  CHECK(eat_cli({"history", run.dir.string(), "--since", "0"}).code
        == exit_code::usage);
}

TEST_CASE("eat history stops at a gap in the event log, saying the store is "
          "damaged") {
  // It listed 1 - 4 and then 6 - 8, exit 0, as if nothing were missing.
  sample_run run;
  test::raw_delete(run.dir / "store", "events", persistence::encode_seq_key(3));
  for (std::vector<std::string> args :
    {std::vector<std::string>{"history", run.dir.string()},
      {"history", run.dir.string(), "--json"}}) {
    auto r = eat_cli(args);
    CHECK(r.code == exit_code::bad_run_dir);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);
    CHECK_THAT(r.out,
      Catch::EndsWith("eat: store_failure: the event log has no event 3 (the "
                      "next is 4): the store is damaged (eat fsck lists every "
                      "problem)\n"));
  }
  CHECK(eat_cli({"history", run.dir.string(), "--since", "4"}).code
        == exit_code::ok);
}

TEST_CASE("eat history stops at an event whose body does not decode, in "
          "both forms") {
  // Listed plainly, it printed "(undecodable body: ...)" and exited 0.
  sample_run run;
  auto damaged = make_event(event_kind::evaluation_finished, eval_result{});
  damaged.seq = 4;
  damaged.body = "\xc1";
  test::raw_put(run.dir / "store", "events", persistence::encode_seq_key(4),
    wire::encode(damaged));
  for (std::vector<std::string> args :
    {std::vector<std::string>{"history", run.dir.string()},
      {"history", run.dir.string(), "--json"}}) {
    auto r = eat_cli(args);
    INFO(r.out);
    CHECK(r.code == exit_code::bad_run_dir);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 4);
    CHECK_THAT(r.out, Catch::Contains("eat: store_failure: event 4: "));
  }
}

TEST_CASE("eat fsck passes a consistent run and names each problem of a "
          "damaged one") {
  sample_run run;
  auto ok = eat_cli({"fsck", run.dir.string()});
  CHECK(ok.code == exit_code::ok);
  CHECK_THAT(ok.out, Catch::Contains("4 events, 3 files"));
  CHECK_THAT(ok.out, Catch::EndsWith("consistent\n"));
  SECTION("a view that disagrees with the log") {
    test::raw_put(run.dir / "store", "views", "run", "\x80"); // an empty map
    auto r = eat_cli({"fsck", run.dir.string()});
    CHECK(r.code == exit_code::inconsistent);
    CHECK_THAT(r.out, Catch::Contains("view 'run' differs"));
  }
  SECTION("a blob whose bytes changed") {
    std::string hex;
    {
      auto s = persistence::store::open(run.dir / "store");
      REQUIRE(s);
      auto log = persistence::file_tree{**s}.log("/config.toml");
      REQUIRE(log);
      hex = log->front().blob;
    }
    std::string raw;
    for (size_t i = 0; i < hex.size(); i += 2)
      raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    test::raw_put(run.dir / "store", "blobs", raw, "tampered");
    auto r = eat_cli({"fsck", run.dir.string()});
    CHECK(r.code == exit_code::inconsistent);
    CHECK_THAT(r.out, Catch::Contains("/config.toml"));
  }
}
