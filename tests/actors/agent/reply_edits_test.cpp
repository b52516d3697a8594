// Specification of turning a model's reply into a kernel: the last fenced
// block, and SEARCH/REPLACE edits applied to the parent.

#include <catch2/catch.hpp>

#include "actors/agent/reply_edits.hpp"
#include "actors/protocol/error.hpp"

using namespace eat;

namespace {

const std::string parent = "int f(int x) {\n"
                           "  int y = x;\n"
                           "  return y;\n"
                           "}\n";

std::string edit(const std::string& search, const std::string& replace) {
  return "<<<<<<< SEARCH\n" + search + "=======\n" + replace
         + ">>>>>>> REPLACE\n";
}

} // namespace

TEST_CASE("last_fenced_block returns the contents of the last code block") {
  auto text = "First try:\n```cpp\nint a;\n```\nBetter:\n```\nint b;\n"
              "int c;\n```\nDone.";
  CHECK(
    last_fenced_block(text) == std::optional<std::string>{"int b;\nint c;\n"});
}

TEST_CASE("last_fenced_block ignores the language tag and CRLF line ends") {
  CHECK(last_fenced_block("```c++\r\nint a;\r\n```\r\n")
        == std::optional<std::string>{"int a;\n"});
}

TEST_CASE("last_fenced_block keeps shorter fences inside a longer one") {
  auto text = "````markdown\n```cpp\nint a;\n```\n````\n";
  CHECK(last_fenced_block(text)
        == std::optional<std::string>{"```cpp\nint a;\n```\n"});
}

TEST_CASE("last_fenced_block finds nothing without a complete block") {
  CHECK(last_fenced_block("no code here") == std::nullopt);
  CHECK(last_fenced_block("```cpp\nint a; // cut off") == std::nullopt);
}

TEST_CASE("apply_search_replace applies blocks in order") {
  auto text = "Change two lines.\n"
              + edit("  int y = x;\n", "  int y = x * 2;\n") + "and\n"
              + edit("  return y;\n", "  return y + 1;\n");
  auto out = apply_search_replace(parent, text);
  REQUIRE(out);
  CHECK(*out == "int f(int x) {\n  int y = x * 2;\n  return y + 1;\n}\n");
}

TEST_CASE("apply_search_replace matches the last line of a parent without "
          "a final newline") {
  auto out = apply_search_replace("a\nb", edit("b\n", "c\n"));
  REQUIRE(out);
  CHECK(*out == "a\nc");
}

TEST_CASE("apply_search_replace names the block whose SEARCH is not found") {
  auto text = edit("  int y = x;\n", "  int y = 0;\n")
              + edit("  return z;\n", "  return 0;\n");
  auto out = apply_search_replace(parent, text);
  REQUIRE(!out);
  CHECK(code_of(out.error()) == error::agent_failed);
  CHECK_THAT(render(out.error()),
    Catch::Contains("block 2") && Catch::Contains("not found"));
}

TEST_CASE("apply_search_replace refuses a SEARCH text found twice") {
  auto out = apply_search_replace("x;\nx;\n", edit("x;\n", "y;\n"));
  REQUIRE(!out);
  CHECK_THAT(render(out.error()),
    Catch::Contains("block 1") && Catch::Contains("found 2 times"));
}

TEST_CASE("apply_search_replace refuses an unterminated block") {
  auto out = apply_search_replace(parent, "<<<<<<< SEARCH\n  return y;\n");
  REQUIRE(!out);
  CHECK_THAT(render(out.error()), Catch::Contains("not terminated"));
}

TEST_CASE("kernel_from_reply prefers SEARCH/REPLACE edits to code blocks") {
  auto reply
    = "```cpp\nunrelated();\n```\n" + edit("  return y;\n", "  return -y;\n");
  auto out = kernel_from_reply(parent, reply);
  REQUIRE(out);
  CHECK(*out == "int f(int x) {\n  int y = x;\n  return -y;\n}\n");
}

TEST_CASE("kernel_from_reply takes the last fenced block without edits") {
  auto out = kernel_from_reply(parent, "Here:\n```cpp\nint g();\n```\n");
  REQUIRE(out);
  CHECK(*out == "int g();\n");
}

TEST_CASE("kernel_from_reply fails on a reply without code") {
  auto out = kernel_from_reply(parent, "Try tiling.");
  REQUIRE(!out);
  CHECK(render(out.error()) == "agent_failed: no kernel in reply");
  auto empty = kernel_from_reply(parent, "```cpp\n\n```\n");
  REQUIRE(!empty);
  CHECK_THAT(render(empty.error()), Catch::Contains("empty"));
}
