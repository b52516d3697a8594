#include "runtime/task_tolerance.hpp"

#include <cmath>

namespace eat {

namespace {

using toml_check::number_rule;

constexpr number_rule non_negative{"a number >= 0", [](double x) {
                                     return x >= 0;
                                   }};
constexpr number_rule ratio{"a number in (0, 1]", [](double x) {
                              return x > 0 && x <= 1;
                            }};
constexpr number_rule cap{"a finite number > 0", [](double x) {
                            return x > 0 && std::isfinite(x);
                          }};

} // namespace

devices::tolerance read_tolerance(
  toml_check::table_reader& t, double default_tol) {
  devices::tolerance tol;
  tol.atol = t.number("atol", non_negative).value_or(default_tol);
  tol.rtol = t.number("rtol", non_negative).value_or(default_tol);
  tol.matched_ratio = t.number("matched_ratio", ratio).value_or(1);
  tol.max_error = t.number("max_error", cap).value_or(0);
  if (tol.matched_ratio < 1 && tol.max_error == 0 && !t.has("max_error"))
    t.fail("matched_ratio",
      "a matched ratio below 1 needs max_error, a cap on every element's "
      "|got - ref| (BENCHMARK-PROTOCOL.md section 2)");
  return tol;
}

} // namespace eat
