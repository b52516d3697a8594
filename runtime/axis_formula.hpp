// Arithmetic over a definition's axes, as task.toml writes the useful FLOPs
// and compulsory bytes of one call (`flops = "34816 * num_kv_indices"`) and
// as definition.json writes simple constraints ("len_indptr == batch_size +
// 1"): numbers, axis names, + - * /, unary minus and parentheses
// (docs/tasks.md). Evaluated in double.
//
// Pure functions; any thread.

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace eat {

/// The longest formula, in characters, and the deepest nesting of
/// parentheses and signs it may have.
constexpr size_t max_formula_text = 1000;
constexpr size_t max_formula_depth = 64;

/// Evaluates `text` with each name bound to its value in `axes`. Fails
/// (error::invalid_task) on a syntax error, an unknown name or a result that
/// is not finite, with a message saying what and where, e.g. "unknown axis
/// 'nm_pages' at column 9".
caf::expected<double> evaluate_formula(
  std::string_view text, const std::map<std::string, int64_t>& axes);

} // namespace eat
