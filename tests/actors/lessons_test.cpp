// Specification of the lessons the supervisor draws at the end of a run.

#include <catch2/catch.hpp>

#include "actors/lessons.hpp"

using namespace eat;

namespace {

scored_candidate passed(std::string id, std::string order, double speedup) {
  return {std::move(id), "tiled", {{"order", std::move(order)}},
          eval_status::passed, speedup};
}

} // namespace

TEST_CASE("a value with a clearly higher median speedup becomes a lesson "
          "citing its best candidates and the runner-up's best") {
  std::vector<scored_candidate> scored{
    passed("c1", "ikj", 10), passed("c2", "ikj", 9), passed("c3", "ikj", 11),
    passed("c4", "ijk", 2),  passed("c5", "ijk", 3)};
  auto lessons = derive_lessons(scored, {});
  REQUIRE(lessons.size() == 1);
  CHECK(lessons[0].id == "L0001");
  CHECK_THAT(lessons[0].text, Catch::StartsWith("**tiled / order**: `ikj`"));
  CHECK_THAT(lessons[0].text, Catch::Contains("median 10.00x over 3"));
  CHECK(lessons[0].evidence == std::vector<std::string>{"c3", "c1", "c2", "c5"});
  CHECK(lesson_subject(lessons[0].text) == "tiled / order");
}

TEST_CASE("too little evidence, or values too close, make no lesson") {
  SECTION("two candidates for the best value") {
    std::vector<scored_candidate> scored{passed("c1", "ikj", 10),
                                         passed("c2", "ikj", 9),
                                         passed("c4", "ijk", 2),
                                         passed("c5", "ijk", 3)};
    CHECK(derive_lessons(scored, {}).empty());
  }
  SECTION("medians within 25 %") {
    std::vector<scored_candidate> scored{
      passed("c1", "ikj", 3.0), passed("c2", "ikj", 3.1),
      passed("c3", "ikj", 2.9), passed("c4", "ijk", 2.6),
      passed("c5", "ijk", 2.7)};
    CHECK(derive_lessons(scored, {}).empty());
  }
}

TEST_CASE("failures become a lesson with their mix") {
  std::vector<scored_candidate> scored{
    passed("c1", "ikj", 3),
    {"c2", "tiled", {{"order", "ijk"}}, eval_status::compile_error, 0},
    {"c3", "tiled", {{"order", "jik"}}, eval_status::incorrect, 0}};
  auto lessons = derive_lessons(scored, {});
  REQUIRE(lessons.size() == 1);
  CHECK(lessons[0].text
        == "**failures**: 2 of 3 candidates failed (1 compile_error, 1 "
           "incorrect).");
  CHECK(lessons[0].evidence == std::vector<std::string>{"c2", "c3"});
}

TEST_CASE("a changed lesson supersedes the current one on its subject and "
          "an unchanged one is not repeated") {
  std::vector<scored_candidate> scored{
    passed("c1", "ikj", 10), passed("c2", "ikj", 9), passed("c3", "ikj", 11),
    passed("c4", "ijk", 2),  passed("c5", "ijk", 3)};
  auto first = derive_lessons(scored, {});
  REQUIRE(first.size() == 1);
  CHECK(derive_lessons(scored, first).empty());
  scored.push_back(passed("c6", "ikj", 20));
  auto second = derive_lessons(scored, first);
  REQUIRE(second.size() == 1);
  CHECK(second[0].id == "L0002");
  CHECK(second[0].supersedes == "L0001");
}
