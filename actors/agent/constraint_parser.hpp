// The parsed form of a template constraint (actors/agent/constraints.hpp):
// a tree of nodes in one vector, children by index. Internal to
// constraints.cpp, which checks and evaluates it.
//
// Pure functions; any thread.

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eat::constraint_syntax {

enum class op {
  number,
  text,
  name,
  negate,
  invert,
  add,
  sub,
  mul,
  div,
  mod,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  both,
  either,
};

/// One node of a parsed constraint; children are indices into the tree.
struct node {
  op kind = op::number;
  int64_t number = 0;
  /// A text literal's contents or a name.
  std::string text;
  /// 1-based column where the node starts, for messages.
  size_t column = 0;
  int a = -1;
  int b = -1;
};

/// A parsed constraint.
struct tree {
  std::vector<node> nodes;
  int root = -1;
  /// The first syntax error, with its column; "" when there is none.
  std::string why;
};

/// The longest constraint, in characters, and the deepest nesting of
/// parentheses, unary minus and '!': beyond either the parse fails, so
/// that checking and evaluating the tree (recursive) stay shallow.
constexpr size_t max_text = 1000;
constexpr size_t max_depth = 64;

/// Parses `text`; tree::why says where the first syntax error is.
tree parse(std::string_view text);

} // namespace eat::constraint_syntax
