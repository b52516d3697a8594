#include "runtime/flashinfer_import.hpp"

#include <fstream>

#include "actors/protocol/error.hpp"
#include "runtime/task_definition.hpp"
#include "runtime/task_file.hpp"
#include "runtime/toml_check.hpp"

namespace fs = std::filesystem;

namespace eat {

namespace {

constexpr size_t max_json_bytes = size_t{64} << 20;

caf::error fail(const std::string& what) {
  return make_error(error::invalid_task, what);
}

caf::expected<std::string> read_all(const fs::path& file) {
  auto contents = toml_check::read_file(file, max_json_bytes);
  if (!contents.ok)
    return fail("cannot read '" + file.string() + "': " + contents.why);
  return std::move(contents.text);
}

/// The message of an invalid_task error, each line prefixed by `file`.
caf::error in_file(const fs::path& file, const caf::error& err) {
  const auto& ctx = err.context();
  auto text = ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0)
                                                : render(err);
  std::string result;
  size_t start = 0;
  while (start < text.size()) {
    auto end = std::min(text.find('\n', start), text.size());
    result += (result.empty() ? "" : "\n") + file.string() + ": "
              + text.substr(start, end - start);
    start = end + 1;
  }
  return fail(result);
}

/// The lines of `text` that `lines` name (1-based), each ending in a
/// newline.
std::string pick_lines(
  const std::string& text, const std::vector<workload_line>& lines) {
  std::vector<std::string> all;
  size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    all.push_back(
      text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  std::string result;
  for (const auto& l : lines)
    result += all[l.line - 1] + "\n";
  return result;
}

caf::expected<void> write_file(const fs::path& file, const std::string& text) {
  std::ofstream out{file, std::ios::binary | std::ios::trunc};
  out << text;
  out.close();
  if (!out)
    return fail("cannot write '" + file.string() + "'");
  return {};
}

std::string axes_text(const definition_info& def) {
  std::string result;
  for (const auto& a : def.axes)
    result += (result.empty() ? "" : ", ") + a.name
              + (a.is_const ? " = " + std::to_string(a.value) : "");
  return result;
}

/// A commented [inputs.*] hint for each integer tensor input.
std::string generator_hints(const definition_info& def) {
  std::string result;
  for (const auto& in : def.inputs) {
    if (in.scalar || (in.dtype != "int32" && in.dtype != "int64"))
      continue;
    auto indptr = in.name.find("indptr") != std::string::npos;
    result += "\n# " + in.name + " is " + in.dtype
              + ": say how to draw it (docs/tasks.md, \"Generators\"), e.g.\n"
              + "# [inputs." + in.name + "]\n";
    result += indptr ? "# generator = \"indptr\"\n# total = \"<axis of the "
                       "last offset>\"\n"
                     : "# generator = \"permutation\"\n# range = \"<axis "
                       "bounding the ids>\"\n";
  }
  return result;
}

} // namespace

std::string task_skeleton(const std::string& definition_json) {
  auto def = parse_definition(definition_json);
  if (!def)
    return {};
  std::string text;
  // The name is a folder name by now; op_type is any string: quoted, so
  // that no newline in it ends the comment.
  text += "# Imported from the FlashInfer-Bench definition " + def->name
          + " (op_type " + toml_check::quote(def->op_type)
          + ") by `eat tasks import`.\n";
  text += "name = " + toml_check::quote(def->name) + "\n";
  text += "description = "
          + toml_check::quote(
            def->name + " (" + def->op_type + "), see definition.json")
          + "\n";
  text += "kind = \"definition\"\nbackend = \"cpu\"\n";
  text += "definition = \"definition.json\"\nworkloads = \"workloads.jsonl\"\n";
  text += "\n# Still to write (docs/tasks.md): the reference, computing every "
          "output in\n# double (extern \"C\" eat_kernel_reference), and the "
          "naive baseline that\n# speedups are measured against (extern \"C\" "
          "eat_kernel).\n";
  text += "reference = \"reference.cpp\"\nbaseline = \"baseline.cpp\"\n";
  text += "\n# Still to write: useful FLOPs and compulsory bytes of one call, "
          "over the\n# axes ("
          + axes_text(*def)
          + "), e.g.\n"
            "# flops = \"2 * batch_size * ...\"\n# bytes = \"...\"\n";
  text += generator_hints(*def);
  text += "\n# Tolerances: each output's dtype defaults on every element "
          "(docs/tasks.md).\n# FlashInfer-Bench's required_matched_ratio "
          "becomes a matched ratio with\n# a cap on every element's error, "
          "e.g.:\n# [tolerances."
          + def->outputs.front().name
          + "]\n# matched_ratio = 0.95\n# max_error = 0.5\n";
  return text;
}

caf::expected<import_result> import_definition(const fs::path& definition,
  const fs::path& workloads, const fs::path& tasks_dir) {
  auto def_text = read_all(definition);
  if (!def_text)
    return std::move(def_text.error());
  auto def = parse_definition(*def_text);
  if (!def)
    return in_file(definition, def.error());
  if (!valid_task_name(def->name))
    return fail(definition.string() + ": name: " + toml_check::quote(def->name)
                + " cannot name a task folder (up to 64 letters, digits, "
                  "'_', '-' and '.')");
  auto lines_text = read_all(workloads);
  if (!lines_text)
    return std::move(lines_text.error());
  auto lines = parse_workloads(*lines_text, *def);
  if (!lines)
    return in_file(workloads, lines.error());
  auto folder = tasks_dir / def->name;
  std::error_code ec;
  if (fs::exists(folder, ec))
    return fail("task folder '" + folder.string()
                + "' already exists; eat tasks import never overwrites one");
  if (!fs::create_directories(folder, ec) || ec)
    return fail("cannot create '" + folder.string() + "': " + ec.message());
  for (auto [file, text] : {std::pair{"definition.json", *def_text},
         std::pair{"workloads.jsonl", pick_lines(*lines_text, *lines)},
         std::pair{"task.toml", task_skeleton(*def_text)}})
    if (auto ok = write_file(folder / file, text); !ok)
      return std::move(ok.error());
  import_result result{def->name, folder, lines->size(), {}};
  result.todo = {
    (folder / "reference.cpp").string()
      + ": extern \"C\" void eat_kernel_reference(const void* const* inputs, "
        "double* const* outputs, const int64_t* axes), every output in double",
    (folder / "baseline.cpp").string()
      + ": extern \"C\" void eat_kernel(const void* const* inputs, void* "
        "const* outputs, const int64_t* axes), the naive kernel",
    "task.toml: flops = \"...\" and bytes = \"...\" over the axes ("
      + axes_text(*def) + ")"};
  for (const auto& in : def->inputs)
    if (!in.scalar && (in.dtype == "int32" || in.dtype == "int64"))
      result.todo.push_back("task.toml: [inputs." + in.name
                            + "] with a generator (indptr or permutation)");
  return result;
}

} // namespace eat
