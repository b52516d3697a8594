#include "actors/agent/constraint_parser.hpp"

#include <cctype>
#include <charconv>
#include <utility>

namespace eat::constraint_syntax {

namespace {

/// Recursive descent over the grammar of constraints.hpp, lowest
/// precedence first: || then && then ! then comparisons, + -, * / %, unary
/// minus, literals, names and parentheses.
class parser {
public:
  explicit parser(std::string_view text) : text_(text) {
    // nop
  }

  tree run() {
    tree_.root = either();
    skip_space();
    if (pos_ < text_.size())
      fail("unexpected '" + std::string{text_[pos_]} + "'");
    return std::move(tree_);
  }

private:
  void fail(std::string what) {
    if (tree_.why.empty())
      tree_.why = std::move(what) + " at column " + std::to_string(pos_ + 1);
  }

  void skip_space() {
    while (pos_ < text_.size()
           && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }

  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token)
      return false;
    pos_ += token.size();
    return true;
  }

  int add(op kind, size_t column, int a = -1, int b = -1) {
    node n;
    n.kind = kind;
    n.column = column;
    n.a = a;
    n.b = b;
    tree_.nodes.push_back(std::move(n));
    return static_cast<int>(tree_.nodes.size() - 1);
  }

  int either() {
    auto x = both();
    while (accept("||"))
      x = add(op::either, tree_.nodes[x].column, x, both());
    return x;
  }

  int both() {
    auto x = invert();
    while (accept("&&"))
      x = add(op::both, tree_.nodes[x].column, x, invert());
    return x;
  }

  int invert() {
    skip_space();
    auto column = pos_ + 1;
    if (text_.substr(pos_, 2) != "!=" && accept("!"))
      return add(op::invert, column, invert());
    return compare();
  }

  int compare() {
    auto x = sum();
    static constexpr std::pair<std::string_view, op> ops[] = {
      {"==", op::eq},
      {"!=", op::ne},
      {"<=", op::le},
      {">=", op::ge},
      {"<", op::lt},
      {">", op::gt},
    };
    for (const auto& [token, kind] : ops)
      if (accept(token))
        return add(kind, tree_.nodes[x].column, x, sum());
    return x;
  }

  int sum() {
    auto x = product();
    for (;;) {
      if (accept("+"))
        x = add(op::add, tree_.nodes[x].column, x, product());
      else if (accept("-"))
        x = add(op::sub, tree_.nodes[x].column, x, product());
      else
        return x;
    }
  }

  int product() {
    auto x = unary();
    for (;;) {
      if (accept("*"))
        x = add(op::mul, tree_.nodes[x].column, x, unary());
      else if (accept("/"))
        x = add(op::div, tree_.nodes[x].column, x, unary());
      else if (accept("%"))
        x = add(op::mod, tree_.nodes[x].column, x, unary());
      else
        return x;
    }
  }

  int unary() {
    skip_space();
    auto column = pos_ + 1;
    if (accept("-"))
      return add(op::negate, column, unary());
    return primary();
  }

  int primary() {
    skip_space();
    auto column = pos_ + 1;
    if (accept("(")) {
      auto x = either();
      if (!accept(")"))
        fail("expected ')'");
      return x;
    }
    if (pos_ >= text_.size()) {
      fail("expected a number, a \"text\", a name or '('");
      return add(op::number, column);
    }
    auto c = static_cast<unsigned char>(text_[pos_]);
    if (std::isdigit(c))
      return number(column);
    if (c == '"')
      return quoted(column);
    if (std::isalpha(c) || c == '_')
      return name(column);
    fail("unexpected '" + std::string{text_[pos_]} + "'");
    return add(op::number, column);
  }

  int number(size_t column) {
    auto x = add(op::number, column);
    const auto* first = text_.data() + pos_;
    auto [end, ec] = std::from_chars(
      first, text_.data() + text_.size(), tree_.nodes[x].number);
    if (ec != std::errc{})
      fail("number out of range");
    pos_ += static_cast<size_t>(end - first);
    return x;
  }

  int quoted(size_t column) {
    auto close = text_.find('"', pos_ + 1);
    if (close == std::string_view::npos) {
      fail("unterminated \"text\"");
      pos_ = text_.size();
      return add(op::text, column);
    }
    auto x = add(op::text, column);
    tree_.nodes[x].text = std::string{text_.substr(pos_ + 1, close - pos_ - 1)};
    pos_ = close + 1;
    return x;
  }

  int name(size_t column) {
    auto start = pos_;
    while (pos_ < text_.size()
           && (std::isalnum(static_cast<unsigned char>(text_[pos_]))
               || text_[pos_] == '_'))
      ++pos_;
    auto x = add(op::name, column);
    tree_.nodes[x].text = std::string{text_.substr(start, pos_ - start)};
    return x;
  }

  std::string_view text_;
  size_t pos_ = 0;
  tree tree_;
};

} // namespace

tree parse(std::string_view text) {
  return parser{text}.run();
}

} // namespace eat::constraint_syntax
