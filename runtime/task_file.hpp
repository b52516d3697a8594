// Task files: kernels/<name>/task.toml and the sources it names, loaded into
// the task_spec that agents and devices receive (actors/protocol/task.hpp),
// plus the rendering of a template family into kernel source. The file format
// and the template syntax are described in docs/tasks.md.
// Loading reads the file system only; everything here is safe from any
// thread, and the results are plain values.

#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "actors/agent/render.hpp"

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// True if `name` can name a task folder: letters, digits, '_', '-' and '.',
/// not starting with '.', at most 64 characters.
bool valid_task_name(std::string_view name);

/// Loads <tasks_dir>/<name>/task.toml and the sources it names into a
/// task_spec. Fails with error::invalid_task naming the file, and for each
/// problem the field, what was expected and its line:column (all problems
/// at once, in file order).
caf::expected<task_spec> load_task(
  const std::filesystem::path& tasks_dir, const std::string& name);

/// Names of the tasks in `tasks_dir` (folders holding a task.toml), sorted.
/// Fails (invalid_task) when the directory cannot be listed.
caf::expected<std::vector<std::string>> list_tasks(
  const std::filesystem::path& tasks_dir);

} // namespace eat
