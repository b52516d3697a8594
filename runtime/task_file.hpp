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

/// What a run or a check may change in a task without editing its files.
struct task_overrides {
  /// A workloads JSONL file used instead of the one a definition task's
  /// `workloads` key names, e.g. all of FlashInfer-Bench's workloads
  /// where the task runs a subset. A relative path is taken from the task
  /// folder. Empty: the task's own.
  std::filesystem::path workloads;
};

/// Loads <tasks_dir>/<name>/task.toml and the sources it names into a
/// task_spec, with `overrides` applied. Fails with error::invalid_task
/// naming the file, and for each problem the field, what was expected and
/// its line:column (all problems at once, in file order); a workloads
/// override for a task that is not a definition task is one of them.
caf::expected<task_spec> load_task(const std::filesystem::path& tasks_dir,
  const std::string& name, const task_overrides& overrides = {});

/// Names of the tasks in `tasks_dir` (folders holding a task.toml), sorted.
/// Fails (invalid_task) when the directory cannot be listed.
caf::expected<std::vector<std::string>> list_tasks(
  const std::filesystem::path& tasks_dir);

} // namespace eat
