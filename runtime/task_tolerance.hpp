// The tolerance keys of task.toml (docs/tasks.md): atol, rtol,
// matched_ratio and max_error, at the top of an fp32 task's file or in a
// definition task's [tolerances.<output>] table. Internal to eat_config;
// one thread at a time.

#pragma once

#include <array>
#include <string_view>

#include "devices/kinds/tolerance.hpp"
#include "runtime/toml_check.hpp"

namespace eat {

/// The keys read_tolerance reads.
inline constexpr std::array<std::string_view, 4> tolerance_keys{
  "atol", "rtol", "matched_ratio", "max_error"};

/// Reads the tolerance keys of `t`: atol and rtol default to `default_tol`,
/// matched_ratio to 1 (every element), max_error to none. A matched ratio
/// below 1 without max_error is recorded at matched_ratio.
devices::tolerance read_tolerance(
  toml_check::table_reader& t, double default_tol);

} // namespace eat
