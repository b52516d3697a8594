#include "actors/agent/constraints.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include "actors/agent/constraint_parser.hpp"

namespace eat {

namespace {

enum class kind_of_value { number, text, truth };

const char* describe(kind_of_value k) {
  switch (k) {
    case kind_of_value::number: return "a number";
    case kind_of_value::text: return "text";
    default: return "true or false";
  }
}

std::optional<int64_t> as_integer(const std::string& x) {
  int64_t out = 0;
  auto [end, ec] = std::from_chars(x.data(), x.data() + x.size(), out);
  if (ec != std::errc{} || end != x.data() + x.size())
    return std::nullopt;
  return out;
}

const param_space* param_named(
  const template_family& f, const std::string& name) {
  for (const auto& p : f.params)
    if (p.name == name)
      return &p;
  return nullptr;
}

bool is_numeric(const param_space& p) {
  return std::all_of(p.values.begin(), p.values.end(), [](const auto& v) {
    return as_integer(v).has_value();
  });
}

bool is_fact(const std::string& name) {
  const auto& xs = target_fact_names();
  return std::find(xs.begin(), xs.end(), name) != xs.end();
}

namespace cs = constraint_syntax;

bool is_ordering(cs::op kind) {
  return kind == cs::op::lt || kind == cs::op::le || kind == cs::op::gt
         || kind == cs::op::ge;
}

/// Why a name is unknown, listing the names a constraint may use.
std::string unknown_name(const template_family& f, const cs::node& n) {
  std::string params;
  for (const auto& p : f.params)
    params += (params.empty() ? "" : ", ") + p.name;
  std::string facts;
  for (const auto& x : target_fact_names())
    facts += (facts.empty() ? "" : ", ") + x;
  return "unknown name '" + n.text + "' at column " + std::to_string(n.column)
         + " (parameters: " + params + "; target facts: " + facts + ")";
}

/// The type of each node, and the first type error.
class typing {
public:
  typing(const cs::tree& t, const template_family& f) : t_(t), f_(f) {
    // nop
  }

  std::string run() {
    auto root = of(t_.root);
    if (why_.empty() && root != kind_of_value::truth)
      why_ = std::string{"the constraint is "} + describe(root)
             + ", not a condition such as 'mc >= mr'";
    return why_;
  }

private:
  void fail(const cs::node& n, std::string what) {
    if (why_.empty())
      why_ = std::move(what) + " at column " + std::to_string(n.column);
  }

  void expect(int i, kind_of_value want) {
    auto got = of(i);
    if (got != want)
      fail(t_.nodes[i],
        std::string{"expected "} + describe(want) + ", got " + describe(got));
  }

  kind_of_value name(const cs::node& n) {
    if (const auto* p = param_named(f_, n.text))
      return is_numeric(*p) ? kind_of_value::number : kind_of_value::text;
    if (is_fact(n.text))
      return kind_of_value::number;
    if (why_.empty())
      why_ = unknown_name(f_, n);
    return kind_of_value::number;
  }

  /// A text literal compared with a text parameter must be one of its
  /// values: a misspelt value would make the constraint always false.
  void check_literal(const cs::node& named, const cs::node& literal) {
    const auto* p = param_named(f_, named.text);
    if (named.kind != cs::op::name || literal.kind != cs::op::text || !p)
      return;
    std::string values;
    for (const auto& v : p->values)
      if (v == literal.text)
        return;
      else
        values += (values.empty() ? "" : ", ") + v;
    fail(literal, "\"" + literal.text + "\" is not a value of " + p->name + " ("
                    + values + ")");
  }

  kind_of_value equality(const cs::node& n) {
    auto a = of(n.a);
    auto b = of(n.b);
    if (a != b)
      fail(n,
        std::string{"cannot compare "} + describe(a) + " with " + describe(b));
    check_literal(t_.nodes[n.a], t_.nodes[n.b]);
    check_literal(t_.nodes[n.b], t_.nodes[n.a]);
    return kind_of_value::truth;
  }

  kind_of_value of(int i) {
    const auto& n = t_.nodes[i];
    switch (n.kind) {
      case cs::op::number: return kind_of_value::number;
      case cs::op::text: return kind_of_value::text;
      case cs::op::name: return name(n);
      case cs::op::negate:
        expect(n.a, kind_of_value::number);
        return kind_of_value::number;
      case cs::op::invert:
        expect(n.a, kind_of_value::truth);
        return kind_of_value::truth;
      case cs::op::eq:
      case cs::op::ne: return equality(n);
      case cs::op::both:
      case cs::op::either:
        expect(n.a, kind_of_value::truth);
        expect(n.b, kind_of_value::truth);
        return kind_of_value::truth;
      default: // arithmetic and ordering: numbers
        expect(n.a, kind_of_value::number);
        expect(n.b, kind_of_value::number);
        return is_ordering(n.kind) ? kind_of_value::truth
                                   : kind_of_value::number;
    }
  }

  const cs::tree& t_;
  const template_family& f_;
  std::string why_;
};

/// The parsed and type-checked `text`; tree::why holds the first problem.
cs::tree checked(std::string_view text, const template_family& f) {
  auto t = cs::parse(text);
  if (t.why.empty())
    t.why = typing{t, f}.run();
  return t;
}

/// A value while evaluating: one of a number, text, or true/false.
struct value {
  kind_of_value kind = kind_of_value::number;
  int64_t number = 0;
  std::string text;
  bool truth = false;
};

/// Evaluates a type-checked tree for one instance; `unknown` is set by a
/// missing fact or parameter, a division by zero or an overflow.
class evaluation {
public:
  evaluation(const cs::tree& t, const template_family& f,
    const param_map& params, const target_facts& facts)
    : t_(t), f_(f), params_(params), facts_(facts) {
    // nop
  }

  constraint_verdict run() {
    auto root = of(t_.root);
    if (unknown_)
      return constraint_verdict::unknown;
    return root.truth ? constraint_verdict::holds : constraint_verdict::fails;
  }

private:
  value name(const cs::node& n) {
    value v;
    if (auto p = params_.find(n.text); p != params_.end()) {
      const auto* space = param_named(f_, n.text);
      if (space && !is_numeric(*space))
        v.kind = kind_of_value::text;
      v.text = p->second;
      v.number = as_integer(p->second).value_or(0);
    } else if (auto f = facts_.find(n.text); f != facts_.end()) {
      v.number = f->second;
    } else {
      unknown_ = true;
    }
    return v;
  }

  int64_t arithmetic(cs::op kind, int64_t a, int64_t b) {
    int64_t out = 0;
    bool bad = false;
    if (kind == cs::op::add)
      bad = __builtin_add_overflow(a, b, &out);
    else if (kind == cs::op::sub)
      bad = __builtin_sub_overflow(a, b, &out);
    else if (kind == cs::op::mul)
      bad = __builtin_mul_overflow(a, b, &out);
    else if (b == 0 || (a == INT64_MIN && b == -1))
      bad = true;
    else
      out = kind == cs::op::div ? a / b : a % b;
    unknown_ = unknown_ || bad;
    return bad ? 0 : out;
  }

  bool compare(const cs::node& n) {
    auto a = of(n.a);
    auto b = of(n.b);
    // Typing made both sides the same kind.
    bool same = a.kind == kind_of_value::text    ? a.text == b.text
                : a.kind == kind_of_value::truth ? a.truth == b.truth
                                                 : a.number == b.number;
    switch (n.kind) {
      case cs::op::eq: return same;
      case cs::op::ne: return !same;
      case cs::op::lt: return a.number < b.number;
      case cs::op::le: return a.number <= b.number;
      case cs::op::gt: return a.number > b.number;
      default: return a.number >= b.number;
    }
  }

  value of(int i) {
    const auto& n = t_.nodes[i];
    value v;
    switch (n.kind) {
      case cs::op::number: v.number = n.number; return v;
      case cs::op::text:
        v.kind = kind_of_value::text;
        v.text = n.text;
        return v;
      case cs::op::name: return name(n);
      case cs::op::negate:
        v.number = arithmetic(cs::op::sub, 0, of(n.a).number);
        return v;
      case cs::op::invert:
        v.kind = kind_of_value::truth;
        v.truth = !of(n.a).truth;
        return v;
      case cs::op::both:
        v.kind = kind_of_value::truth;
        v.truth = of(n.a).truth && of(n.b).truth;
        return v;
      case cs::op::either:
        v.kind = kind_of_value::truth;
        v.truth = of(n.a).truth || of(n.b).truth;
        return v;
      case cs::op::add:
      case cs::op::sub:
      case cs::op::mul:
      case cs::op::div:
      case cs::op::mod:
        v.number = arithmetic(n.kind, of(n.a).number, of(n.b).number);
        return v;
      default:
        v.kind = kind_of_value::truth;
        v.truth = compare(n);
        return v;
    }
  }

  const cs::tree& t_;
  const template_family& f_;
  const param_map& params_;
  const target_facts& facts_;
  bool unknown_ = false;
};

} // namespace

const std::vector<std::string>& target_fact_names() {
  static const std::vector<std::string> names{
    "simd_floats", "vector_registers"};
  return names;
}

std::string check_constraint(
  std::string_view text, const template_family& family) {
  return checked(text, family).why;
}

constraint_verdict evaluate_constraint(std::string_view text,
  const template_family& family, const param_map& params,
  const target_facts& facts) {
  auto t = checked(text, family);
  if (!t.why.empty())
    return constraint_verdict::unknown;
  return evaluation{t, family, params, facts}.run();
}

family_verdict evaluate_constraints(const template_family& family,
  const param_map& params, const target_facts& facts) {
  family_verdict out;
  for (const auto& c : family.constraints) {
    auto v = evaluate_constraint(c, family, params, facts);
    if (v == constraint_verdict::fails)
      return {v, c};
    if (v == constraint_verdict::unknown)
      out.verdict = v;
  }
  return out;
}

std::string violated_constraint(const template_family& family,
  const param_map& params, const target_facts& facts) {
  return evaluate_constraints(family, params, facts).violated;
}

} // namespace eat
