// Rendering a template family into kernel source: every `{{name}}` is
// replaced by the chosen value of parameter `name`. Used by agents to make
// candidates and by the task loader (runtime/task_file.hpp) to check
// templates. Pure functions; any thread.

#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// One `{{name}}` placeholder of a template source.
struct placeholder {
  std::string name;
  /// Byte offset of its `{{` in the source.
  size_t offset = 0;
  /// 1-based line of its `{{`.
  size_t line = 0;
};

/// The placeholders of `source` in order: `{{` followed by an identifier
/// ([A-Za-z_][A-Za-z0-9_]*) and `}}`, with no spaces; any other `{{` (e.g. a
/// C++ brace initialiser such as `{{1, 2}}`) is plain text.
std::vector<placeholder> find_placeholders(std::string_view source);

/// Renders `family` with `params`. Fails (invalid_task) on a missing or
/// unknown parameter, a value outside the parameter's space, or a
/// placeholder that names no parameter of the family.
caf::expected<std::string> render_template(const template_family& family,
                                           const param_map& params);

} // namespace eat
