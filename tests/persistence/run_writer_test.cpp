// Specification of the single writer of a run's store: events, their files
// and the views are committed together or not at all; an event that does not
// fit the history is refused; a writer killed at any moment leaves a store
// that fsck finds consistent, with every acknowledged commit in it.

#include <catch2/catch.hpp>

#include <random>

#include <sys/wait.h>
#include <unistd.h>

#include "actors/protocol/wire.hpp"
#include "persistence/event_log.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/fsck.hpp"
#include "persistence/run_writer.hpp"
#include "persistence/views.hpp"
#include "tests/persistence/child_process.hpp"
#include "tests/persistence/make_event.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;
using namespace eat::persistence;

namespace {

std::vector<event> start_events() {
  run_started s;
  s.run_id = "r";
  s.task = "sgemm";
  team_spawned t;
  t.team = "t1";
  t.strategy = "local";
  return {make_event(event_kind::run_started, s),
    make_event(event_kind::team_spawned, t)};
}

candidate make_candidate(uint64_t n) {
  candidate c;
  c.id = "t1-c" + std::to_string(n);
  c.team = "t1";
  c.family = "tiled";
  c.source = "// kernel " + std::to_string(n) + "\n";
  c.tokens = 10;
  return c;
}

eval_result make_result(const candidate& c, double speedup) {
  eval_result r;
  r.candidate = c.id;
  r.status = eval_status::passed;
  r.geomean_speedup = speedup;
  return r;
}

std::string kernel_path(const candidate& c) {
  return "/teams/t1/candidates/" + c.id + "/kernel.cpp";
}

uint64_t must(const caf::expected<std::vector<uint64_t>>& seqs) {
  REQUIRE(seqs);
  return seqs->empty() ? 0 : seqs->back();
}

} // namespace

TEST_CASE("the writer commits events, files and views together") {
  test::temp_dir tmp;
  auto s = store::open(tmp.path());
  REQUIRE(s);
  auto w = run_writer::open(**s);
  REQUIRE(w);
  CHECK(must((*w)->commit(start_events(), {})) == 2);
  auto c = make_candidate(1);
  CHECK(must((*w)->commit({make_event(event_kind::candidate_submitted, c)},
          {{kernel_path(c), c.source, "t1"}}))
        == 3);
  CHECK((*w)->history().teams.at("t1").submitted == 1);
  CHECK(file_tree{**s}.get(kernel_path(c)) == c.source);
  auto views = read_views(**s);
  REQUIRE(views);
  CHECK(*views == all_views((*w)->history()));
}

TEST_CASE("an event that does not fit the history is refused with its whole "
          "batch") {
  test::temp_dir tmp;
  auto s = store::open(tmp.path());
  REQUIRE(s);
  auto w = run_writer::open(**s);
  REQUIRE(w);
  must((*w)->commit(start_events(), {}));
  auto c = make_candidate(1);
  auto ghost = make_candidate(9);
  auto refused = (*w)->commit(
    {make_event(event_kind::candidate_submitted, c),
      make_event(event_kind::evaluation_finished, make_result(ghost, 2.0))},
    {{kernel_path(c), c.source, "t1"}});
  REQUIRE(!refused);
  CHECK_THAT(render(refused.error()), Catch::Contains("unknown candidate"));
  CHECK(event_log{**s}.last_seq() == uint64_t{2});
  CHECK(!file_tree{**s}.get(kernel_path(c)));
  CHECK((*w)->history().candidates.empty()); // the batch's first event undone
  // The writer goes on from where the store is.
  CHECK(must((*w)->commit({make_event(event_kind::candidate_submitted, c)}, {}))
        == 3);
}

TEST_CASE("a lesson rewrites /learning.md from every lesson") {
  test::temp_dir tmp;
  auto s = store::open(tmp.path());
  REQUIRE(s);
  auto w = run_writer::open(**s);
  REQUIRE(w);
  must((*w)->commit(start_events(), {}));
  auto c = make_candidate(1);
  must((*w)->commit(
    {make_event(event_kind::candidate_submitted, c),
      make_event(event_kind::evaluation_finished, make_result(c, 3))},
    {}));
  learning_entry lesson;
  lesson.id = "L0001";
  lesson.text = "**tiled / order**: ikj wins.";
  lesson.evidence = {c.id};
  must((*w)->commit({make_event(event_kind::learning_added, lesson)}, {}));
  auto doc = file_tree{**s}.get("/learning.md");
  REQUIRE(doc);
  CHECK_THAT(*doc, Catch::Contains("L0001"));
  CHECK_THAT(*doc, Catch::Contains("/teams/t1/candidates/t1-c1/result.md"));
}

TEST_CASE("a reopened writer has the history the last one had") {
  test::temp_dir tmp;
  auto s = store::open(tmp.path());
  REQUIRE(s);
  view_records before;
  {
    auto w = run_writer::open(**s);
    REQUIRE(w);
    must((*w)->commit(start_events(), {}));
    for (uint64_t n = 1; n <= 5; ++n) {
      auto c = make_candidate(n);
      must((*w)->commit(
        {make_event(event_kind::candidate_submitted, c),
          make_event(event_kind::evaluation_finished, make_result(c, 1.0 + n))},
        {}));
    }
    before = all_views((*w)->history());
  }
  auto again = run_writer::open(**s);
  REQUIRE(again);
  CHECK(all_views((*again)->history()) == before);
  CHECK((*again)->history().best_candidate == "t1-c5");
}

TEST_CASE("a reopened writer rewrites the views an older eat wrote, so that "
          "fsck finds the store consistent") {
  // Team views had no agent_evaluations before it was added: a run written
  // then and resumed now would keep the old record until the team's next
  // event, and fsck would call it inconsistent.
  test::temp_dir tmp;
  auto s = store::open(tmp.path());
  REQUIRE(s);
  {
    auto w = run_writer::open(**s);
    REQUIRE(w);
    must((*w)->commit(start_events(), {}));
  }
  // The record as an older eat wrote it: the fields of then, no more.
  msgpack::sbuffer old;
  msgpack::packer<msgpack::sbuffer> pk{old};
  pk.pack_map(9);
  pk.pack("team"), pk.pack("t1"), pk.pack("strategy"), pk.pack("local");
  pk.pack("active"), pk.pack(true);
  for (auto field : {"submitted", "evaluated", "passed", "tokens"})
    pk.pack(field), pk.pack(uint64_t{0});
  pk.pack("best_candidate"), pk.pack("");
  pk.pack("best_speedup"), pk.pack(0.0);
  std::string record{old.data(), old.size()};
  REQUIRE(wire::decode<team_view>(record)); // still readable
  REQUIRE((*s)->update([&](txn& t) {
    return put_views(t, **s, {{"team/t1", record}});
  }));
  REQUIRE(fsck(**s)->problems.size() == 1); // the view a rebuild changes
  auto again = run_writer::open(**s);
  REQUIRE(again);
  auto views = read_views(**s);
  REQUIRE(views);
  CHECK(*views == all_views((*again)->history()));
  CHECK(fsck(**s)->problems.empty());
}

namespace {

/// The child of the crash test: continues the run in `dir`, committing a
/// candidate with its kernel, then its result with its report, and writes
/// the last seq of each acknowledged commit to `out`.
int commit_until_killed(const std::filesystem::path& dir, int out) {
  auto s = store::open(dir);
  if (!s)
    return 1;
  auto w = run_writer::open(**s);
  if (!w)
    return 2;
  auto& writer = **w;
  if (!writer.history().started && !writer.commit(start_events(), {}))
    return 3;
  for (int step = 0; step < 100'000; ++step) {
    const auto& h = writer.history();
    const auto& team = h.teams.at("t1");
    caf::expected<std::vector<uint64_t>> seqs = caf::error{};
    if (!team.unfinished.empty()) {
      auto c = team.unfinished.front();
      seqs = writer.commit({make_event(event_kind::evaluation_finished,
                             make_result(c, 1.0 + step % 7))},
        {{"/teams/t1/candidates/" + c.id + "/result.md", "passed\n", "t1"}});
    } else {
      auto c = make_candidate(team.submitted + 1);
      seqs = writer.commit({make_event(event_kind::candidate_submitted, c)},
        {{kernel_path(c), c.source, "t1"}});
    }
    if (!seqs)
      return 4;
    auto last = seqs->back();
    if (write(out, &last, sizeof last) != static_cast<ssize_t>(sizeof last))
      return 5;
  }
  return 0;
}

} // namespace

TEST_CASE("a writer killed by SIGKILL mid-commit leaves a consistent store "
          "holding every acknowledged commit") {
  test::temp_dir tmp;
  auto dir = tmp.path() / "store";
  std::mt19937 rng{20261130};
  std::uniform_int_distribution<int> acks_before_kill{1, 30};
  uint64_t acked = 0;
  for (int round = 0; round < 20; ++round) {
    auto wanted = acks_before_kill(rng);
    INFO("round " << round << ", kill after " << wanted << " acks");
    {
      test::child_process writer{
        [&](int out) { return commit_until_killed(dir, out); }};
      for (int i = 0; i < wanted; ++i)
        REQUIRE(writer.read_exact(&acked, sizeof acked));
      REQUIRE(WIFSIGNALED(writer.kill_and_reap()));
    }
    auto s = store::open(dir);
    REQUIRE(s);
    auto events = event_log{**s}.read(1);
    REQUIRE(events);
    REQUIRE(events->size() >= acked);
    for (size_t i = 0; i < events->size(); ++i)
      REQUIRE((*events)[i].seq == i + 1);
    auto report = fsck(**s);
    REQUIRE(report);
    INFO(report->problems.size() << " problems, first: "
                                 << (report->problems.empty()
                                       ? ""
                                       : report->problems.front()));
    CHECK(report->problems.empty());
  }
}
