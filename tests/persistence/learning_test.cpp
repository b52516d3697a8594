// Specification of the learning document (persistence/learning.hpp): which
// lessons may follow which, and how /learning.md is rendered from them.

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/learning.hpp"
#include "tests/persistence/value_of.hpp"

using namespace eat;

namespace {

learning_entry lesson(std::string id, std::string text,
  std::vector<std::string> evidence = {}, std::string supersedes = "") {
  learning_entry e;
  e.id = std::move(id);
  e.text = std::move(text);
  e.author = learning_author::team;
  e.author_name = "t1";
  e.evidence = std::move(evidence);
  e.supersedes = std::move(supersedes);
  return e;
}

/// The text of the error `check_learning` reports; fails when it accepts.
std::string refusal(
  const learning_entry& e, const std::vector<learning_entry>& earlier) {
  auto ok = check_learning(e, earlier);
  REQUIRE_FALSE(ok);
  CHECK(code_of(ok.error()) == error::invalid_arguments);
  return render(ok.error());
}

/// Teams of the candidates used below; unknown ids have no team.
std::string team_of(const std::string& cid) {
  static const std::map<std::string, std::string> teams{
    {"t1-c0003", "t1"}, {"t1-c0005", "t1"}, {"t2-c0001", "t2"}};
  auto i = teams.find(cid);
  return i == teams.end() ? std::string{} : i->second;
}

} // namespace

TEST_CASE("learning authors are named for people", "[learning]") {
  CHECK(to_string(learning_author::supervisor) == "supervisor");
  CHECK(to_string(learning_author::team) == "team");
  CHECK(to_string(learning_author::agent) == "agent");
  CHECK(to_string(learning_author::operator_) == "operator");
}

TEST_CASE("a learning entry survives MessagePack unchanged", "[learning]") {
  auto e
    = lesson("L0002", "Tiles of 64 win.", {"t1-c0003", "t2-c0001"}, "L0001");
  e.author = learning_author::operator_;
  auto back = test::value_of(wire::decode<learning_entry>(wire::encode(e)));
  CHECK(back.id == "L0002");
  CHECK(back.text == "Tiles of 64 win.");
  CHECK(back.author == learning_author::operator_);
  CHECK(back.author_name == "t1");
  CHECK(back.evidence == std::vector<std::string>{"t1-c0003", "t2-c0001"});
  CHECK(back.supersedes == "L0001");
}

TEST_CASE("a learning entry with an unknown author code does not decode",
  "[learning]") {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> p{buf};
  p.pack_map(6);
  p.pack("id"), p.pack("L0001");
  p.pack("text"), p.pack("x");
  p.pack("author"), p.pack(4); // one past operator_
  p.pack("author_name"), p.pack("");
  p.pack("evidence"), p.pack(std::vector<std::string>{});
  p.pack("supersedes"), p.pack("");
  auto x = wire::decode<learning_entry>({buf.data(), buf.size()});
  REQUIRE_FALSE(x);
  CHECK(code_of(x.error()) == error::malformed_message);
  CHECK_THAT(render(x.error()), Catch::Contains("learning_entry"));
}

TEST_CASE(
  "a lesson may cite evidence and supersede a current lesson", "[learning]") {
  std::vector<learning_entry> earlier{lesson("L0001", "Tiles of 32 win.")};
  CHECK(check_learning(
    lesson("L0002", "Tiles of 64 win.", {"t1-c0003"}, "L0001"), earlier));
  CHECK(check_learning(lesson("L0001", "First lesson."), {}));
}

TEST_CASE("a lesson needs an id and a text", "[learning]") {
  CHECK_THAT(refusal(lesson("", "text"), {lesson("L0001", "a")}),
    Catch::Contains("learning entry #2 has an empty id"));
  CHECK_THAT(refusal(lesson(" \t", "text"), {}),
    Catch::Contains("learning entry #1 has an empty id"));
  CHECK_THAT(refusal(lesson("L0001", ""), {}),
    Catch::Contains("learning entry L0001 has an empty text"));
  CHECK_THAT(refusal(lesson("L0001", "\n  \n"), {}),
    Catch::Contains("learning entry L0001 has an empty text"));
}

TEST_CASE("lesson ids are unique", "[learning]") {
  std::vector<learning_entry> earlier{
    lesson("L0001", "a"), lesson("L0002", "b")};
  CHECK_THAT(refusal(lesson("L0002", "c"), earlier),
    Catch::Contains("learning entry L0002 reuses the id of an "
                    "earlier entry"));
}

TEST_CASE("evidence ids are not empty", "[learning]") {
  CHECK_THAT(refusal(lesson("L0001", "a", {"t1-c0003", ""}), {}),
    Catch::Contains("learning entry L0001 has an empty evidence id "
                    "(evidence 2)"));
}

TEST_CASE("a lesson supersedes only an earlier lesson that is still current",
  "[learning]") {
  std::vector<learning_entry> earlier{
    lesson("L0001", "a"), lesson("L0002", "b", {}, "L0001")};
  SECTION("an unknown id") {
    CHECK_THAT(refusal(lesson("L0003", "c", {}, "L0009"), earlier),
      Catch::Contains("learning entry L0003 supersedes L0009, which "
                      "is not an earlier entry"));
  }
  SECTION("itself") {
    CHECK_THAT(refusal(lesson("L0003", "c", {}, "L0003"), earlier),
      Catch::Contains("supersedes L0003, which is not an earlier "
                      "entry"));
  }
  SECTION("one that was superseded already") {
    CHECK_THAT(refusal(lesson("L0003", "c", {}, "L0001"), earlier),
      Catch::Contains("learning entry L0003 supersedes L0001, which "
                      "L0002 superseded already"));
  }
  SECTION("the one that superseded another") {
    CHECK(check_learning(lesson("L0003", "c", {}, "L0002"), earlier));
  }
}

TEST_CASE(
  "an empty learning document says there are no lessons yet", "[learning]") {
  CHECK(render_learning({}, team_of)
        == "# Learning document\n\n"
           "Lessons of this run, oldest first, each with the evaluations "
           "that support it.\n\n"
           "## Lessons\n\n"
           "None yet.\n");
}

TEST_CASE("the learning document lists current lessons, then superseded "
          "ones",
  "[learning]") {
  auto first = lesson("L0001", "Tiles of 32 win.\n", {"t1-c0003"});
  first.author = learning_author::supervisor;
  first.author_name = "";
  auto second = lesson("L0002", "Tiles of 64 win on every workload.",
    {"t1-c0005", "t2-c0001"}, "L0001");
  auto third = lesson("L0003", "Unrolling by 4 helps.", {});
  third.author = learning_author::agent;
  third.author_name = "t2.a1";
  auto doc = render_learning({first, second, third}, team_of);
  CHECK(doc
        == "# Learning document\n\n"
           "Lessons of this run, oldest first, each with the evaluations "
           "that support it.\n\n"
           "## Lessons\n\n"
           "### L0002\n\n"
           "Tiles of 64 win on every workload.\n\n"
           "Author: team t1. Evidence: "
           "[t1-c0005](/teams/t1/candidates/t1-c0005/result.md), "
           "[t2-c0001](/teams/t2/candidates/t2-c0001/result.md). "
           "Replaces [L0001](#l0001).\n\n"
           "### L0003\n\n"
           "Unrolling by 4 helps.\n\n"
           "Author: agent t2.a1. Evidence: none.\n\n"
           "## Superseded\n\n"
           "### L0001\n\n"
           "Tiles of 32 win.\n\n"
           "Author: supervisor. Evidence: "
           "[t1-c0003](/teams/t1/candidates/t1-c0003/result.md). "
           "Replaced by [L0002](#l0002).\n");
  CHECK(render_learning({first, second, third}, team_of) == doc);
}

TEST_CASE("a chain of replacements shows each link", "[learning]") {
  auto doc
    = render_learning({lesson("L0001", "a"), lesson("L0002", "b", {}, "L0001"),
                        lesson("L0003", "c", {}, "L0002")},
      team_of);
  auto current = doc.find("## Lessons");
  auto superseded = doc.find("## Superseded");
  REQUIRE(superseded != std::string::npos);
  CHECK(doc.find("### L0003", current) < superseded);
  CHECK(doc.find("### L0001", superseded) != std::string::npos);
  CHECK(doc.find("### L0002", superseded) != std::string::npos);
  CHECK_THAT(doc, Catch::Contains("Evidence: none. Replaced by "
                                  "[L0002](#l0002).\n"));
  CHECK_THAT(doc, Catch::Contains("Evidence: none. Replaces [L0001](#l0001). "
                                  "Replaced by [L0003](#l0003).\n"));
  CHECK_THAT(doc, Catch::Contains("Evidence: none. Replaces [L0002](#l0002)."
                                  "\n"));
}

TEST_CASE(
  "evidence of a candidate whose team is unknown has no link", "[learning]") {
  auto doc = render_learning({lesson("L0001", "a", {"x-c0009"})}, team_of);
  CHECK_THAT(doc, Catch::Contains("Evidence: x-c0009 (team unknown)."));
  CHECK_THAT(doc, !Catch::Contains("/teams//"));
}

TEST_CASE("names are escaped for markdown and links for URLs", "[learning]") {
  auto e = lesson("L0001", "Keep *this* markdown.", {"c 1[x]"});
  e.author_name = "team_*one*";
  auto doc = render_learning({e}, [](const std::string&) {
    return std::string{"t/1"};
  });
  CHECK_THAT(doc, Catch::Contains("Keep *this* markdown."));
  CHECK_THAT(doc, Catch::Contains("Author: team team\\_\\*one\\*."));
  CHECK_THAT(doc, Catch::Contains("[c 1\\[x\\]](/teams/t%2F1/candidates/"
                                  "c%201%5Bx%5D/result.md)"));
}
