// Definition tasks (kind "definition", docs/tasks.md): a FlashInfer-Bench
// Definition (definition.json) and its Workload JSONL (workloads.jsonl),
// read and resolved into the task_spec's workloads: every axis value, typed
// inputs and outputs in ABI order, generators, scalar values, tolerances and
// the FLOPs and bytes of one call. Loading reads the file system only; pure
// otherwise; any thread.

#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "actors/protocol/task.hpp"
#include "runtime/toml_check.hpp"

namespace eat {

/// One axis of a definition.
struct definition_axis {
  std::string name;
  bool is_const = false;
  int64_t value = 0;
};

/// One input or output of a definition, as written.
struct definition_tensor {
  std::string name;
  /// Axis names; empty with `scalar` for shape null, empty alone for [].
  std::vector<std::string> shape;
  bool scalar = false;
  std::string dtype;
};

/// The parts of a definition the harness uses, in file order.
struct definition_info {
  std::string name;
  std::string op_type;
  std::vector<definition_axis> axes;
  std::vector<definition_tensor> inputs;
  std::vector<definition_tensor> outputs;
  std::vector<std::string> constraints;
};

/// Parses definition.json. Fails (invalid_task) listing every problem, one
/// per line, as "<field>: <what>", e.g. "inputs.q.dtype: expected one of
/// ...".
caf::expected<definition_info> parse_definition(std::string_view text);

/// One line of workloads.jsonl that belongs to the definition.
struct workload_line {
  /// 1-based line number in the file.
  size_t line = 0;
  std::string uuid;
  /// Values of the var axes.
  std::map<std::string, int64_t> axes;
  /// Input descriptors: "random", or "scalar" with its value.
  std::map<std::string, std::string> types;
  std::map<std::string, double> scalars;
};

/// Parses workloads.jsonl (FlashInfer-Bench Trace lines with a `workload`
/// object, or bare Workload objects), keeping the lines whose `definition`
/// is `def.name` (or that name none). Fails (invalid_task) listing every
/// problem as "line <n>: <what>"; a safetensors input is refused; no line
/// for the definition is an error too.
caf::expected<std::vector<workload_line>> parse_workloads(
  std::string_view text, const definition_info& def);

/// How task.toml names a file: a relative path inside the task folder, or
/// `../<task>/<path>` inside a sibling task's folder (a GPU task sharing
/// its CPU twin's reference, definition and workloads), never above the
/// tasks directory.
bool is_task_file_path(std::string_view path);

/// Why `path`, a file task.toml in `folder` names, is not to be read: it
/// leads, through a symbolic link, out of the tasks directory (the folder's
/// parent) that is_task_file_path keeps names in; "" when it does not.
std::string leaves_tasks_dir(
  const std::filesystem::path& folder, const std::filesystem::path& path);

/// The expectation for is_task_file_path in messages.
constexpr const char* task_file_path_expected
  = "a relative path inside the task folder or, as ../<task>/<file>, "
    "inside another task's folder";

/// Reads the definition keys of task.toml (definition, workloads, flops,
/// bytes, [tolerances.*], [inputs.*]) and the two files they name from
/// `folder` into `spec`: its definition text, formulas, workloads, and the
/// first output's dtype and tolerances as the task's. Problems go to `out`
/// at the key concerned, naming the file and field (and JSONL line). A
/// non-empty `workloads` replaces the file the `workloads` key names (a
/// relative path is taken from `folder`, `..` allowed).
void read_definition_task(toml_check::table_reader& t,
  const std::filesystem::path& folder, task_spec& spec,
  toml_check::problems& out, const std::filesystem::path& workloads = {});

} // namespace eat
