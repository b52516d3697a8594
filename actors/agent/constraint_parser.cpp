#include "actors/agent/constraint_parser.hpp"

#include <cctype>
#include <charconv>
#include <initializer_list>
#include <optional>
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
    if (text_.size() > max_text) {
      fail("longer than " + std::to_string(max_text) + " characters");
      return std::move(tree_);
    }
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

  using operators = std::initializer_list<std::pair<std::string_view, op>>;

  /// The first of `ops` whose token comes next, consumed; none if none.
  std::optional<op> accept_any(operators ops) {
    for (const auto& [token, kind] : ops)
      if (accept(token))
        return kind;
    return std::nullopt;
  }

  /// A left-associative chain of `next` joined by the operators `ops`.
  int chain(int (parser::*next)(), operators ops) {
    auto x = (this->*next)();
    while (auto kind = accept_any(ops))
      x = add(*kind, tree_.nodes[x].column, x, (this->*next)());
    return x;
  }

  int either() {
    return chain(&parser::both, {{"||", op::either}});
  }

  int both() {
    return chain(&parser::invert, {{"&&", op::both}});
  }

  int invert() {
    skip_space();
    auto column = pos_ + 1;
    if (text_.substr(pos_, 2) != "!=" && accept("!")) {
      deeper level{*this};
      return add(op::invert, column, level.ok ? invert() : -1);
    }
    return compare();
  }

  int compare() {
    auto x = sum();
    // Two-character operators first: "<=" before "<".
    if (auto kind = accept_any({{"==", op::eq}, {"!=", op::ne}, {"<=", op::le},
          {">=", op::ge}, {"<", op::lt}, {">", op::gt}}))
      return add(*kind, tree_.nodes[x].column, x, sum());
    return x;
  }

  int sum() {
    return chain(&parser::product, {{"+", op::add}, {"-", op::sub}});
  }

  int product() {
    return chain(
      &parser::unary, {{"*", op::mul}, {"/", op::div}, {"%", op::mod}});
  }

  int unary() {
    skip_space();
    auto column = pos_ + 1;
    if (accept("-")) {
      deeper level{*this};
      return add(op::negate, column, level.ok ? unary() : -1);
    }
    return primary();
  }

  int primary() {
    skip_space();
    auto column = pos_ + 1;
    if (accept("(")) {
      deeper level{*this};
      if (!level.ok)
        return add(op::number, column);
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

  /// One level of nesting (a parenthesis, a unary minus or a '!') for
  /// as long as it lives; `ok` is false, and the parse failed, past
  /// max_depth, so that a hostile text cannot exhaust the stack.
  struct deeper {
    explicit deeper(parser& p) : p_(p) {
      ok = ++p_.depth_ <= max_depth;
      if (!ok) {
        --p_.pos_; // at the one-character token that went too deep
        p_.fail(
          "nested more than " + std::to_string(max_depth) + " levels deep");
        p_.pos_ = p_.text_.size();
      }
    }
    ~deeper() {
      --p_.depth_;
    }
    deeper(const deeper&) = delete;
    deeper& operator=(const deeper&) = delete;
    parser& p_;
    bool ok = true;
  };

  std::string_view text_;
  size_t pos_ = 0;
  size_t depth_ = 0;
  tree tree_;
};

} // namespace

tree parse(std::string_view text) {
  return parser{text}.run();
}

} // namespace eat::constraint_syntax
