#include "devices/kinds/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace eat::devices {

size_t tolerance::allowed_mismatches(size_t n) const {
  if (!(matched_ratio < 1))
    return 0;
  // The slack absorbs the rounding of 1 - ratio (1 - 0.99 is a hair above
  // 0.01, 1 - 0.999 a hair below 0.001).
  auto allowed
    = std::floor((1 - matched_ratio) * static_cast<double>(n) + 1e-6);
  return static_cast<size_t>(std::max(0.0, allowed));
}

tolerance tolerance::between_outputs() const {
  tolerance t;
  t.atol = 2 * atol;
  t.rtol = 2 * rtol;
  t.matched_ratio = std::max(0.0, 2 * matched_ratio - 1);
  t.max_error = 2 * max_error;
  return t;
}

tolerance tolerance_of(const task_spec& task) {
  return {task.atol, task.rtol, task.matched_ratio, task.max_error};
}

tolerance tolerance_of(const tensor_arg& output) {
  return {output.atol, output.rtol, output.matched_ratio, output.max_error};
}

void set_tolerance(task_spec& task, const tolerance& t) {
  task.atol = t.atol;
  task.rtol = t.rtol;
  task.matched_ratio = t.matched_ratio;
  task.max_error = t.max_error;
}

void set_tolerance(tensor_arg& output, const tolerance& t) {
  output.atol = t.atol;
  output.rtol = t.rtol;
  output.matched_ratio = t.matched_ratio;
  output.max_error = t.max_error;
}

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

} // namespace

std::string ratio_text(const tolerance& t) {
  std::string text;
  if (t.matched_ratio < 1)
    text
      += " on at least " + number(100 * t.matched_ratio) + " % of the elements";
  if (t.max_error > 0)
    text
      += ", every element within " + number(t.max_error) + " of the reference";
  return text;
}

std::string task_tolerance_text(const task_spec& task) {
  auto text = ratio_text(tolerance_of(task));
  if (!task.deterministic)
    text += "; runs may differ (e.g. atomics), each within tolerance";
  return text;
}

std::string check_tolerance(const tolerance& t) {
  if (!(t.atol >= 0) || !(t.rtol >= 0))
    return "atol and rtol must be numbers >= 0";
  if (!(t.matched_ratio > 0 && t.matched_ratio <= 1))
    return "matched_ratio " + number(t.matched_ratio) + " must lie in (0, 1]";
  if (!(t.max_error >= 0) || !std::isfinite(t.max_error))
    return "max_error " + number(t.max_error)
           + " must be a finite number >= 0 (0: no cap)";
  if (t.matched_ratio < 1 && t.max_error == 0)
    return "matched_ratio " + number(t.matched_ratio)
           + " needs max_error (a cap on every element's error)";
  return {};
}

} // namespace eat::devices
