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
    if (accept('-'))
      return -unary();
    if (accept('+'))
      return unary();
    return primary();
  }

  double primary() {
    if (accept('(')) {
      auto x = sum();
      if (!accept(')'))
        fail("expected ')'");
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
    std::string digits{text_.substr(pos_)};
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
  std::string why_;
};

} // namespace

caf::expected<double> evaluate_formula(
  std::string_view text, const std::map<std::string, int64_t>& axes) {
  return evaluator{text, axes}.run();
}

} // namespace eat
