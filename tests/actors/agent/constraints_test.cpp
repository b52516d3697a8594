#include "actors/agent/constraints.hpp"

#include <catch2/catch.hpp>

using namespace eat;

namespace {

/// A family shaped like the packed sgemm: numeric mr, nr, mc and a text
/// parameter `store`.
template_family packed() {
  template_family f;
  f.name = "packed";
  f.params = {{"mr", {"1", "4", "8", "14"}}, {"nr", {"16", "32", "48"}},
    {"mc", {"4", "16"}}, {"store", {"plain", "stream"}}};
  return f;
}

param_map instance(
  std::string mr, std::string nr, std::string mc, std::string store = "plain") {
  return {{"mr", std::move(mr)}, {"nr", std::move(nr)}, {"mc", std::move(mc)},
    {"store", std::move(store)}};
}

const target_facts avx512{{"simd_floats", 16}, {"vector_registers", 32}};
const target_facts avx2{{"simd_floats", 8}, {"vector_registers", 16}};

constraint_verdict eval(std::string_view text, const param_map& p,
  const target_facts& facts = avx512) {
  return evaluate_constraint(text, packed(), p, facts);
}

} // namespace

TEST_CASE("a constraint compares parameters with integer arithmetic as C++ "
          "does") {
  using v = constraint_verdict;
  CHECK(eval("mc >= mr", instance("4", "16", "16")) == v::holds);
  CHECK(eval("mc >= mr", instance("8", "16", "4")) == v::fails);
  // 48 / 16 == 3 and 48 % 32 == 16: integer division and remainder.
  CHECK(eval("nr / 16 == 3", instance("1", "48", "4")) == v::holds);
  CHECK(eval("nr % 32 == 16", instance("1", "48", "4")) == v::holds);
  CHECK(eval("-mr + 2 * (mc - 1) > 0", instance("14", "16", "4")) == v::fails);
  CHECK(eval("mr != 1 && !(mc < 16) || nr <= 16", instance("4", "32", "16"))
        == v::holds);
  CHECK(eval("mr != 1 && !(mc < 16) || nr <= 16", instance("1", "32", "16"))
        == v::fails);
}

TEST_CASE("a constraint may name the facts of the compile target") {
  using v = constraint_verdict;
  auto packed_fits = "mr * (nr / simd_floats) + nr / simd_floats + 1 "
                     "<= vector_registers";
  // 14 rows x 2 vectors + 2 + 1 = 31 registers of AVX-512's 32; with AVX2
  // the same tile is 14 x 4 + 4 + 1 = 61 of 16.
  CHECK(eval(packed_fits, instance("14", "32", "16"), avx512) == v::holds);
  CHECK(eval(packed_fits, instance("14", "32", "16"), avx2) == v::fails);
  CHECK(eval(packed_fits, instance("1", "32", "16"), avx2) == v::holds);
}

TEST_CASE("a constraint naming a fact the target lacks says nothing") {
  CHECK(eval("nr % simd_floats == 0", instance("1", "48", "4"), {})
        == constraint_verdict::unknown);
  CHECK(violated_constraint(
    [] {
      auto f = packed();
      f.constraints = {"nr % simd_floats == 0"};
      return f;
    }(),
    instance("1", "48", "4"), {})
          .empty());
}

TEST_CASE("text parameters are compared with quoted text") {
  using v = constraint_verdict;
  auto rule = R"(store != "stream" || mr >= 4)";
  CHECK(eval(rule, instance("1", "16", "4", "plain")) == v::holds);
  CHECK(eval(rule, instance("1", "16", "4", "stream")) == v::fails);
  CHECK(eval(rule, instance("4", "16", "4", "stream")) == v::holds);
}

TEST_CASE("a division by zero or an overflow leaves the verdict unknown") {
  using v = constraint_verdict;
  CHECK(eval("nr / (mr - 1) > 2", instance("1", "16", "4")) == v::unknown);
  CHECK(eval("nr % (mr - 1) == 0", instance("1", "16", "4")) == v::unknown);
  CHECK(eval("mr * 9223372036854775807 > 0", instance("4", "16", "4"))
        == v::unknown);
  // && stops at a false left side, so a guard keeps the division safe.
  CHECK(
    eval("mr != 1 && nr / (mr - 1) > 2", instance("1", "16", "4")) == v::fails);
}

TEST_CASE("violated_constraint names the first constraint an instance "
          "breaks") {
  auto f = packed();
  f.constraints = {"mc >= mr", "nr % (2 * simd_floats) == 0"};
  CHECK(violated_constraint(f, instance("4", "16", "16"), avx2).empty());
  CHECK(violated_constraint(f, instance("8", "16", "4"), avx2) == "mc >= mr");
  CHECK(violated_constraint(f, instance("1", "48", "4"), avx2).empty());
  CHECK(violated_constraint(f, instance("1", "48", "16"), avx512)
        == "nr % (2 * simd_floats) == 0");
}

TEST_CASE("a family's constraints together fail on the first violated, "
          "else say nothing when one cannot say") {
  auto f = packed();
  f.constraints = {"nr % simd_floats == 0", "mc >= mr"};
  auto violated = evaluate_constraints(f, instance("8", "16", "4"), {});
  CHECK(violated.verdict == constraint_verdict::fails);
  CHECK(violated.violated == "mc >= mr");
  auto unknown = evaluate_constraints(f, instance("4", "16", "16"), {});
  CHECK(unknown.verdict == constraint_verdict::unknown);
  CHECK(unknown.violated.empty());
  CHECK(evaluate_constraints(f, instance("4", "16", "16"), avx512).verdict
        == constraint_verdict::holds);
  f.constraints.clear();
  CHECK(evaluate_constraints(f, instance("8", "16", "4"), avx512).verdict
        == constraint_verdict::holds);
}

TEST_CASE("check_constraint says what is wrong with a constraint and where") {
  auto f = packed();
  CHECK(check_constraint("mc >= mr", f).empty());
  CHECK(check_constraint(R"(store == "stream" || mr * 2 <= 16)", f).empty());
  CHECK(check_constraint("mc >= nv", f)
        == "unknown name 'nv' at column 7 (parameters: mr, nr, mc, store; "
           "target facts: simd_floats, vector_registers)");
  CHECK(check_constraint("mc >= (mr", f) == "expected ')' at column 10");
  CHECK(check_constraint("mc >= mr ]", f) == "unexpected ']' at column 10");
  CHECK(check_constraint("mc = mr", f) == "unexpected '=' at column 4");
  CHECK(check_constraint("", f)
        == "expected a number, a \"text\", a name or '(' at column 1");
  CHECK(check_constraint(R"(store == "strem")", f)
        == "\"strem\" is not a value of store (plain, stream) at column 10");
  CHECK(check_constraint(R"(store == "stream)", f)
        == "unterminated \"text\" at column 10");
  CHECK(check_constraint("store > 1", f)
        == "expected a number, got text at column 1");
  CHECK(check_constraint("store == 1", f)
        == "cannot compare text with a number at column 1");
  CHECK(check_constraint("mr + mc", f)
        == "the constraint is a number, not a condition such as 'mc >= mr'");
  CHECK(check_constraint("mr && mc > 1", f)
        == "expected true or false, got a number at column 1");
  CHECK(check_constraint("mr > 99999999999999999999", f)
        == "number out of range at column 6");
}

TEST_CASE("a constraint nested deeper than 64 levels or longer than 1000 "
          "characters is refused, however deep the hostile text goes") {
  auto f = packed();
  auto nested = [](size_t levels, std::string_view open) {
    std::string text;
    for (size_t i = 0; i < levels; ++i)
      text += open;
    text += "mr";
    if (open == "(")
      text += std::string(levels, ')');
    return text + " > 1";
  };
  CHECK(check_constraint(nested(60, "("), f).empty());
  CHECK(check_constraint(nested(65, "("), f)
        == "nested more than 64 levels deep at column 65");
  CHECK(check_constraint("!(" + nested(63, "(") + ")", f)
        == "nested more than 64 levels deep at column 65");
  CHECK(check_constraint(nested(65, "-"), f)
        == "nested more than 64 levels deep at column 65");
  CHECK(check_constraint(std::string(65, '!') + "(mr > 1)", f)
        == "nested more than 64 levels deep at column 65");
  // Depth is nesting, not a count: many groups side by side are fine.
  std::string wide = "mr";
  for (int i = 0; i < 100; ++i)
    wide += " + (1)";
  CHECK(check_constraint(wide + " > 1", f).empty());
  // Texts that overflowed the stack before there was a limit.
  CHECK_FALSE(check_constraint(nested(100000, "("), f).empty());
  CHECK_FALSE(check_constraint(std::string(200000, '!') + "mr > 1", f).empty());
  std::string chain = "mr";
  for (int i = 0; i < 100000; ++i)
    chain += "+1";
  CHECK(check_constraint(chain + " > 1", f)
        == "longer than 1000 characters at column 1");
  CHECK(eval(chain + " > 1", instance("8", "16", "4"))
        == constraint_verdict::unknown);
}

TEST_CASE("an invalid constraint excludes nothing") {
  auto f = packed();
  f.constraints = {"mc >= nv"};
  CHECK(
    evaluate_constraint(f.constraints[0], f, instance("8", "16", "4"), avx512)
    == constraint_verdict::unknown);
  CHECK(violated_constraint(f, instance("8", "16", "4"), avx512).empty());
}
