// Specification of the prompt an LLM agent gets: a role template filled
// from the assignment, the parent's source, and template errors.

#include <catch2/catch.hpp>

#include <fstream>

#include "actors/agent/prompt.hpp"
#include "actors/protocol/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace eat;

namespace {

assignment sample() {
  assignment a;
  a.team = "t1";
  a.role = "implementer";
  a.strategy = "explore";
  a.task.name = "gemm_256";
  a.task.backend = "cpu";
  a.task.baseline_source = "void base();\n";
  a.task.families
    = {{"tiled", "void tiled_{{tile}}();\n", {{"tile", {"16", "32"}}}}};
  a.token_budget = 5000;
  for (int i = 0; i < 5; ++i)
    a.history.push_back({"c00000" + std::to_string(i), "tiled",
      {{"tile", "16"}}, eval_status::passed, 1.0 + i});
  return a;
}

} // namespace

TEST_CASE("render_prompt fills every placeholder and keeps recent history") {
  auto a = sample();
  auto p = render_prompt(
    "{{task}}|{{strategy}}|{{budget}}\n{{history}}", a, "void parent();\n", 2);
  REQUIRE(p);
  CHECK_THAT(p->user, Catch::StartsWith("gemm_256|explore|5000 tokens\n"));
  CHECK_THAT(p->user, Catch::Contains("| c000004 | tiled | tile=16 | passed | "
                                      "5.000 |"));
  CHECK_THAT(p->user, Catch::Contains("c000003"));
  CHECK_THAT(p->user, !Catch::Contains("c000002"));
  // The answer format is appended when the template does not place it.
  CHECK_THAT(p->user, Catch::Contains(answer_format_text));
  CHECK_THAT(p->system, Catch::Contains("implementer of team t1"));
}

TEST_CASE("the tolerance states a task's matched ratio and maximum error") {
  auto a = sample();
  a.task.atol = 1e-2;
  a.task.rtol = 1e-2;
  auto plain = render_prompt("{{tolerance}}", a, "", 2);
  REQUIRE(plain);
  CHECK_THAT(
    plain->user, Catch::StartsWith("|a - b| <= 0.010000 + 0.010000 * |ref|\n"));
  a.task.matched_ratio = 0.95;
  a.task.max_error = 0.5;
  auto ratio = render_prompt("{{tolerance}}", a, "", 2);
  REQUIRE(ratio);
  CHECK_THAT(ratio->user,
    Catch::StartsWith("|a - b| <= 0.010000 + 0.010000 * |ref| on at least 95 "
                      "% of the elements, every element within 0.5 of the "
                      "reference\n"));
}

TEST_CASE("a definition task's workload list shows the generic entry point "
          "and the definition that orders its arguments") {
  auto a = sample();
  auto plain = render_prompt("{{workloads}}", a, "");
  REQUIRE(plain);
  CHECK_THAT(plain->user, !Catch::Contains("eat_kernel"));
  a.task.kind = "definition";
  a.task.definition = R"({"name": "mini", "inputs": {"q": {}}})";
  auto p = render_prompt("{{workloads}}", a, "");
  REQUIRE(p);
  CHECK_THAT(p->user, Catch::Contains("void eat_kernel(const void* const* "
                                      "inputs, void* const* outputs, "
                                      "const int64_t* axes);"));
  CHECK_THAT(p->user, Catch::Contains(a.task.definition + "\n```"));
}

TEST_CASE("the default template shows the parent source") {
  auto p = render_prompt(default_role_template, sample(), "void parent();\n");
  REQUIRE(p);
  CHECK_THAT(p->user, Catch::Contains("```cpp\nvoid parent();\n```"));
  CHECK(p->user.find("{{") == std::string::npos);
}

TEST_CASE("render_prompt names an unknown placeholder and its line") {
  auto p = render_prompt("ok\n{{nonsense}}", sample(), "");
  REQUIRE(!p);
  CHECK(code_of(p.error()) == error::invalid_config);
  CHECK_THAT(render(p.error()),
    Catch::Contains("line 2: unknown placeholder {{nonsense}}"));
}

TEST_CASE("parent_source gives the baseline or the rendered template") {
  auto a = sample();
  CHECK(parent_source(a) == std::string{"void base();\n"});
  a.parent = {"c000001", "tiled", {{"tile", "32"}}, eval_status::passed, 2};
  CHECK(parent_source(a) == std::string{"void tiled_32();\n"});
  a.parent.family = "custom";
  auto custom = parent_source(a);
  REQUIRE(!custom);
  CHECK_THAT(render(custom.error()), Catch::Contains("c000001"));
}

TEST_CASE("load_role_template reads <role>.md or names the missing file") {
  test::temp_dir dir;
  std::ofstream{dir.path() / "planner.md"} << "Plan {{task}}.";
  CHECK(
    load_role_template(dir.path(), "planner") == std::string{"Plan {{task}}."});
  auto missing = load_role_template(dir.path(), "reviewer");
  REQUIRE(!missing);
  CHECK_THAT(render(missing.error()), Catch::Contains("reviewer.md"));
  CHECK(load_role_template({}, "any") == std::string{default_role_template});
}
