// `eat tasks import`: turns a FlashInfer-Bench definition and its workloads
// into a task folder, kernels/<definition name>/, holding the two files (the
// workloads filtered to that definition) and a task.toml skeleton; what is
// still needed to run it (a C++ reference and baseline, the FLOPs and bytes
// formulas, generators for integer inputs) is listed for the user
// (docs/tasks.md, "Importing a definition").
//
// A plain function over the file system; any thread.

#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace eat {

/// What an import created.
struct import_result {
  std::string task;
  std::filesystem::path folder;
  size_t workloads = 0;
  /// What the user must still write, one item per entry.
  std::vector<std::string> todo;
};

/// Imports `definition` and `workloads` into `tasks_dir`. Fails
/// (invalid_task) on a malformed file (naming it, its field or line), a
/// definition name that cannot name a folder, no workload for the
/// definition, or an existing task folder, which is never overwritten.
caf::expected<import_result> import_definition(
  const std::filesystem::path& definition,
  const std::filesystem::path& workloads,
  const std::filesystem::path& tasks_dir);

/// The task.toml skeleton for the definition `definition_json` (empty if
/// it does not parse).
std::string task_skeleton(const std::string& definition_json);

} // namespace eat
