#include "runtime/axis_formula.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

/// A recursive-descent evaluator; the first problem found stops it.
class evaluator {
public:
  evaluator(std::string_view text, const std::map<std::string, int64_t>& axes)
    : text_(text), axes_(axes) {
    // nop
  }

  caf::expected<double> run() {
    if (text_.size() > max_formula_text)
      return make_error(error::invalid_task,
        "longer than " + std::to_string(max_formula_text) + " characters");
    auto x = sum();
    skip_space();
    if (why_.empty() && pos_ < text_.size())
      fail("unexpected '" + std::string{text_[pos_]} + "'");
    if (why_.empty() && !std::isfinite(x))
      why_ = "the value is not finite (division by zero?)";
    if (!why_.empty())
      return make_error(error::invalid_task, why_);
    return x;
  }

private:
  void fail(std::string what) {
    if (why_.empty())
      why_ = std::move(what) + " at column " + std::to_string(pos_ + 1);
  }

  void skip_space() {
    while (pos_ < text_.size()
           && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }

  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  double sum() {
    auto x = product();
    for (;;) {
      if (accept('+'))
        x += product();
      else if (accept('-'))
        x -= product();
      else
        return x;
    }
  }

  double product() {
    auto x = unary();
    for (;;) {
      if (accept('*'))
        x *= unary();
      else if (accept('/'))
        x /= unary();
      else
        return x;
    }
  }

  double unary() {
    if (accept('-') || accept('+')) {
      auto sign = text_[pos_ - 1] == '-' ? -1.0 : 1.0;
      if (!deeper())
        return 0;
      auto x = sign * unary();
      --depth_;
      return x;
    }
    return primary();
  }

  /// Enters one more level of nesting (a parenthesis or a sign; the
  /// caller leaves it with --depth_); false, and the evaluation failed, past
  /// max_formula_depth, so that a hostile formula cannot exhaust the stack.
  bool deeper() {
    if (++depth_ <= max_formula_depth)
      return true;
    --pos_; // at the one-character token that went too deep
    fail(
      "nested more than " + std::to_string(max_formula_depth) + " levels deep");
    pos_ = text_.size();
    return false;
  }

  double primary() {
    if (accept('(')) {
      if (!deeper())
        return 0;
      auto x = sum();
      if (!accept(')'))
        fail("expected ')'");
      --depth_;
      return x;
    }
    skip_space();
    if (pos_ >= text_.size()) {
      fail("expected a number or an axis name");
      return 0;
    }
    auto c = static_cast<unsigned char>(text_[pos_]);
    if (std::isdigit(c) || c == '.')
      return number();
    if (std::isalpha(c) || c == '_')
      return name();
    fail("unexpected '" + std::string{text_[pos_]} + "'");
    return 0;
  }

  double number() {
    auto end_of_number = pos_;
    while (end_of_number < text_.size()
           && (std::isalnum(static_cast<unsigned char>(text_[end_of_number]))
               || text_[end_of_number] == '.'
               || ((text_[end_of_number] == '+' || text_[end_of_number] == '-')
                   && (text_[end_of_number - 1] == 'e'
                       || text_[end_of_number - 1] == 'E'))))
      ++end_of_number;
    std::string digits{text_.substr(pos_, end_of_number - pos_)};
    char* end = nullptr;
    auto x = std::strtod(digits.c_str(), &end);
    pos_ += static_cast<size_t>(end - digits.c_str());
    return x;
  }

  double name() {
    auto start = pos_;
    while (pos_ < text_.size()
           && (std::isalnum(static_cast<unsigned char>(text_[pos_]))
               || text_[pos_] == '_'))
      ++pos_;
    std::string id{text_.substr(start, pos_ - start)};
    auto i = axes_.find(id);
    if (i == axes_.end()) {
      pos_ = start;
      fail("unknown axis '" + id + "'");
      return 0;
    }
    return static_cast<double>(i->second);
  }

  std::string_view text_;
  const std::map<std::string, int64_t>& axes_;
  size_t pos_ = 0;
  size_t depth_ = 0;
  std::string why_;
};

} // namespace

caf::expected<double> evaluate_formula(
  std::string_view text, const std::map<std::string, int64_t>& axes) {
  return evaluator{text, axes}.run();
}

} // namespace eat
