#include "runtime/task_file.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "actors/agent/constraints.hpp"
#include "actors/protocol/error.hpp"
#include "runtime/task_definition.hpp"
#include "runtime/task_tolerance.hpp"
#include "runtime/toml_check.hpp"

namespace fs = std::filesystem;

namespace eat {

namespace {

using toml_check::number_rule;
using toml_check::problems;
using toml_check::string_rule;
using toml_check::table_reader;

/// Task files and sources larger than this are refused.
constexpr size_t max_task_bytes = size_t{1} << 20;
constexpr size_t max_source_bytes = size_t{16} << 20;

/// Largest workload axis (m, n, k, batch, ...).
constexpr uint64_t max_axis = 65536;

/// Tolerances of float32 tasks that set none (BENCHMARK-PROTOCOL.md, 2).
constexpr double default_tolerance = 1e-4;

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool is_identifier(std::string_view x) {
  return !x.empty() && !std::isdigit(static_cast<unsigned char>(x[0]))
         && std::all_of(x.begin(), x.end(), is_word_char);
}

constexpr string_rule any_string{"a string", [](std::string_view) {
                                   return true;
                                 }};
constexpr string_rule item_name{
  "a non-empty name of letters, digits, '_', '-' and '.'",
  [](std::string_view x) {
    return !x.empty() && std::all_of(x.begin(), x.end(), [](char c) {
      return is_word_char(c) || c == '-' || c == '.';
    });
  }};
constexpr string_rule condition{
  "strings such as \"mc >= mr\"", [](std::string_view) {
    return true;
  }};
constexpr string_rule identifier{
  "an identifier ([A-Za-z_][A-Za-z0-9_]*)", is_identifier};
constexpr string_rule source_path{task_file_path_expected, is_task_file_path};

constexpr string_rule library_name{
  "a library name as in -l<name> (letters, digits, '_', '+', '-', '.', not "
  "starting with '-')",
  [](std::string_view x) {
    return !x.empty() && x.size() <= 64 && x[0] != '-'
           && std::all_of(x.begin(), x.end(), [](char c) {
                return is_word_char(c) || c == '+' || c == '-' || c == '.';
              });
  }};

/// A harness kind and the axes each of its workloads names, in order
/// (docs/harness.md; devices/kinds/ checks the same axes again).
struct kind_axes {
  std::string_view kind;
  std::vector<std::string_view> axes;
};

const std::vector<kind_axes>& known_kinds() {
  static const std::vector<kind_axes> table{
    {"gemm", {"m", "n", "k"}},
    {"rmsnorm", {"batch", "hidden"}},
    {"softmax", {"rows", "cols"}},
    {"definition", {}}, // axes from definition.json (task_definition.hpp)
  };
  return table;
}

const kind_axes* find_kind_axes(std::string_view kind) {
  for (const auto& k : known_kinds())
    if (k.kind == kind)
      return &k;
  return nullptr;
}

std::string index_path(const std::string& array, size_t i) {
  return array + "[" + std::to_string(i) + "]";
}

// -- header fields -----------------------------------------------------------

/// A source file named by a key, relative to the task folder.
struct source_file {
  fs::path path;
  std::string text;
};

std::optional<source_file> read_source(
  table_reader& t, std::string_view key, const fs::path& folder) {
  if (!t.require(key))
    return std::nullopt;
  auto name = t.string(key, source_path);
  if (!name)
    return std::nullopt;
  auto path = folder / *name;
  if (auto why = leaves_tasks_dir(folder, path); !why.empty()) {
    t.fail(key, why);
    return std::nullopt;
  }
  auto contents = toml_check::read_file(path, max_source_bytes);
  if (!contents.ok) {
    t.fail(key, "cannot read '" + path.string() + "': " + contents.why);
    return std::nullopt;
  }
  if (contents.text.empty()) {
    t.fail(key, "'" + path.string() + "' is empty");
    return std::nullopt;
  }
  return source_file{std::move(path), std::move(contents.text)};
}

/// A required string key whose only accepted value so far is `only`.
std::string read_only_value(
  table_reader& t, std::string_view key, const std::string& only) {
  if (!t.require(key))
    return {};
  auto value = t.string(key, any_string);
  if (value && *value != only)
    t.fail(key,
      toml_check::quote(only) + " (the only " + std::string{key} + " so far)",
      toml_check::describe(*t.get(key)));
  return value.value_or("");
}

/// The kind: one of known_kinds().
std::string read_kind(table_reader& t) {
  if (!t.require("kind"))
    return {};
  auto value = t.string("kind", any_string);
  if (value && find_kind_axes(*value) == nullptr) {
    std::vector<std::string> names;
    for (const auto& k : known_kinds())
      names.push_back(toml_check::quote(std::string{k.kind}));
    t.fail("kind", "one of " + toml_check::join(names, ", "),
      toml_check::describe(*t.get("kind")));
  }
  return value.value_or("");
}

constexpr toml_check::string_rule backend_rule{
  "\"cpu\", \"cuda\" or \"hip\"", [](std::string_view x) {
    return x == "cpu" || x == "cuda" || x == "hip";
  }};

void check_name(table_reader& t, const std::string& folder_name) {
  if (!t.require("name"))
    return;
  auto value = t.string("name", any_string);
  if (value && *value != folder_name)
    t.fail("name", toml_check::quote(folder_name) + " (the folder name)",
      toml_check::describe(*t.get("name")));
}

// -- workloads ---------------------------------------------------------------

/// One workload; its axes are checked only when the kind is known.
workload read_workload(const toml::table& table, const std::string& path,
  const kind_axes* kind, problems& out) {
  table_reader w{&table, path, path, {"name", "axes"}, out};
  workload result;
  if (w.require("name"))
    result.name = w.string("name", item_name).value_or("");
  if (!w.require("axes"))
    return result;
  if (auto* axes = w.table("axes"); axes && kind) {
    auto axes_path = w.full("axes");
    table_reader a{axes, axes_path, axes_path, kind->axes, out};
    for (auto axis : kind->axes)
      if (a.require(axis))
        if (auto x = a.integer(axis, 1, max_axis))
          result.axes[std::string{axis}] = static_cast<int64_t>(*x);
  }
  return result;
}

std::vector<workload> read_workloads(
  table_reader& t, const kind_axes* kind, problems& out) {
  auto* xs = t.tables("workloads");
  if (!t.has("workloads") || (xs && xs->empty())) {
    t.fail("workloads", "expected at least one [[workloads]] table, got none");
    return {};
  }
  std::vector<workload> result;
  if (!xs)
    return result;
  std::set<std::string> names;
  for (size_t i = 0; i < xs->size(); ++i) {
    auto path = index_path("workloads", i);
    const auto& table = *xs->get(i)->as_table();
    auto w = read_workload(table, path, kind, out);
    if (!w.name.empty() && !names.insert(w.name).second)
      out.add(table.get("name")->source(),
        path + ".name: duplicate workload name " + toml_check::quote(w.name));
    result.push_back(std::move(w));
  }
  return result;
}

// -- templates ---------------------------------------------------------------

/// The values of a parameter: integers or strings, stored as strings.
std::vector<std::string> read_values(table_reader& p, problems& out) {
  auto* node = p.get("values");
  auto* xs = node ? node->as_array() : nullptr;
  if (node && !xs) {
    p.fail("values", "a non-empty array of integers or strings",
      toml_check::describe(*node));
    return {};
  }
  if (!xs || xs->empty()) {
    p.fail("values", "expected at least one value, got none");
    return {};
  }
  std::vector<std::string> result;
  for (size_t i = 0; i < xs->size(); ++i) {
    const auto& x = *xs->get(i);
    auto what = index_path(p.full("values"), i);
    std::string value;
    if (auto* s = x.as_string()) {
      value = s->get();
    } else if (auto* n = x.as_integer()) {
      value = std::to_string(n->get());
    } else {
      out.add(x.source(), what + ": expected an integer or a string, got "
                            + toml_check::describe(x));
      continue;
    }
    if (std::find(result.begin(), result.end(), value) != result.end())
      out.add(
        x.source(), what + ": duplicate value " + toml_check::quote(value));
    result.push_back(std::move(value));
  }
  return result;
}

std::vector<param_space> read_params(table_reader& r, problems& out) {
  if (!r.require("params"))
    return {};
  auto* xs = r.tables("params");
  if (xs && xs->empty()) {
    r.fail(
      "params", "expected at least one [[templates.params]] table, got none");
    return {};
  }
  std::vector<param_space> result;
  for (size_t i = 0; xs && i < xs->size(); ++i) {
    auto path = index_path(r.full("params"), i);
    table_reader p{xs->get(i)->as_table(), path, path, {"name", "values"}, out};
    param_space space;
    if (p.require("name"))
      space.name = p.string("name", identifier).value_or("");
    for (const auto& other : result)
      if (!space.name.empty() && other.name == space.name)
        p.fail(
          "name", "duplicate parameter name " + toml_check::quote(space.name));
    space.values = read_values(p, out);
    result.push_back(std::move(space));
  }
  return result;
}

/// Checks that placeholders and parameters match one to one.
void check_placeholders(table_reader& r, const template_family& family,
  const fs::path& path, problems& out) {
  auto found = find_placeholders(family.source);
  std::set<std::string> names;
  std::vector<std::string> params;
  for (const auto& p : family.params)
    params.push_back(p.name);
  for (const auto& x : found)
    if (names.insert(x.name).second
        && std::find(params.begin(), params.end(), x.name) == params.end())
      r.fail("source", "'" + path.string() + "' line " + std::to_string(x.line)
                         + ": placeholder {{" + x.name
                         + "}} is not a parameter of template '" + family.name
                         + "' (parameters: " + toml_check::join(params, ", ")
                         + ")");
  auto* tables = r.get("params")->as_array();
  for (size_t i = 0; i < family.params.size(); ++i)
    if (names.count(family.params[i].name) == 0)
      out.add(tables->get(i)->source(),
        index_path(r.full("params"), i) + ": parameter '"
          + family.params[i].name + "' is never used in '" + path.string()
          + "' (no {{" + family.params[i].name + "}} placeholder)");
}

/// The declared constraints: each valid for the family, and none that names
/// no target fact violated by its default instance (every parameter at its
/// first value); `eat tasks check` checks the others on a device.
std::vector<std::string> read_constraints(
  table_reader& r, const template_family& family, problems& out) {
  if (!r.has("constraints"))
    return {};
  auto texts = r.strings("constraints", condition);
  if (!texts)
    return {};
  param_map first;
  for (const auto& p : family.params)
    first[p.name] = p.values.front();
  const auto* nodes = r.get("constraints")->as_array();
  for (size_t i = 0; i < texts->size(); ++i) {
    const auto& text = (*texts)[i];
    auto what = index_path(r.full("constraints"), i) + ": "
                + toml_check::quote(text) + ": ";
    if (auto why = check_constraint(text, family); !why.empty())
      out.add(nodes->get(i)->source(), what + why);
    else if (evaluate_constraint(text, family, first, {})
             == constraint_verdict::fails)
      out.add(nodes->get(i)->source(),
        what
          + "the default instance (every parameter at its first value) "
            "violates it");
  }
  return std::move(*texts);
}

template_family read_template(const toml::table& table, const std::string& path,
  const fs::path& folder, problems& out) {
  table_reader r{
    &table, path, path, {"name", "source", "params", "constraints"}, out};
  template_family family;
  if (r.require("name"))
    family.name = r.string("name", item_name).value_or("");
  auto source = read_source(r, "source", folder);
  auto known = out.size();
  family.params = read_params(r, out);
  auto params_ok = out.size() == known && !family.params.empty();
  if (source) {
    family.source = std::move(source->text);
    if (params_ok)
      check_placeholders(r, family, source->path, out);
  }
  if (params_ok)
    family.constraints = read_constraints(r, family, out);
  return family;
}

std::vector<template_family> read_templates(
  table_reader& t, const fs::path& folder, problems& out) {
  std::vector<template_family> result;
  auto* xs = t.tables("templates");
  std::set<std::string> names;
  for (size_t i = 0; xs && i < xs->size(); ++i) {
    auto path = index_path("templates", i);
    const auto& table = *xs->get(i)->as_table();
    auto family = read_template(table, path, folder, out);
    if (!family.name.empty() && !names.insert(family.name).second)
      out.add(table.get("name")->source(), path
                                             + ".name: duplicate template name "
                                             + toml_check::quote(family.name));
    result.push_back(std::move(family));
  }
  return result;
}

/// The optional expert baseline and the libraries it links against.
void read_expert(table_reader& t, const fs::path& folder, task_spec& spec) {
  if (t.has("expert"))
    if (auto src = read_source(t, "expert", folder))
      spec.expert_source = std::move(src->text);
  auto libs = t.strings("expert_libs", library_name);
  if (!libs)
    return;
  if (!t.has("expert"))
    t.fail("expert_libs", "given without an expert source ('expert' key)");
  spec.expert_libs = std::move(*libs);
}

task_spec read_task(const toml::table& root, const fs::path& folder,
  const std::string& name, const task_overrides& overrides, problems& out) {
  auto is_definition = root.get("kind") && root.get("kind")->value<std::string>()
                                          == std::string{"definition"};
  std::vector<std::string_view> keys{"name", "description", "kind", "backend",
    "reference", "baseline", "expert", "expert_libs", "workloads", "templates",
    "deterministic"};
  if (is_definition)
    keys.insert(keys.end(),
      {"definition", "flops", "bytes", "tolerances", "inputs"});
  else
    keys.insert(keys.begin() + 4,
      {"dtype", "atol", "rtol", "matched_ratio", "max_error"});
  keys.push_back("trace_definition");
  table_reader t{&root, "", "", keys, out};
  task_spec spec;
  spec.name = name;
  check_name(t, name);
  spec.description = t.string("description", any_string).value_or("");
  spec.kind = read_kind(t);
  spec.backend = t.string("backend", backend_rule).value_or("cpu");
  spec.deterministic = t.boolean("deterministic").value_or(true);
  if (!is_definition) {
    spec.dtype = read_only_value(t, "dtype", "float32");
    spec.trace_definition
      = t.string("trace_definition", item_name).value_or("");
    devices::set_tolerance(spec, read_tolerance(t, default_tolerance));
  }
  if (auto src = read_source(t, "reference", folder))
    spec.reference_source = std::move(src->text);
  if (auto src = read_source(t, "baseline", folder))
    spec.baseline_source = std::move(src->text);
  read_expert(t, folder, spec);
  if (is_definition && t.has("trace_definition"))
    t.fail("trace_definition",
      "only for a task of a builtin kind: a definition task's Solutions and "
      "Traces carry the name in its definition.json");
  if (is_definition)
    read_definition_task(t, folder, spec, out, overrides.workloads);
  else
    spec.workloads = read_workloads(t, find_kind_axes(spec.kind), out);
  if (!is_definition && !overrides.workloads.empty())
    t.fail("workloads",
      "a workloads file (" + overrides.workloads.string()
        + ") can only replace a definition task's workloads; this task "
          "lists its own as [[workloads]] tables");
  spec.families = read_templates(t, folder, out);
  return spec;
}

} // namespace

bool valid_task_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && name[0] != '.'
         && std::all_of(name.begin(), name.end(), [](char c) {
              return is_word_char(c) || c == '-' || c == '.';
            });
}

caf::expected<task_spec> load_task(const fs::path& tasks_dir,
  const std::string& name, const task_overrides& overrides) {
  if (!valid_task_name(name))
    return make_error(error::invalid_task,
      "invalid task name " + toml_check::quote(name)
        + " (expected up to 64 letters, digits, '_', '-' and "
          "'.', not starting with '.')");
  auto folder = tasks_dir / name;
  auto file = folder / "task.toml";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    return make_error(error::invalid_task,
      "no task '" + name + "' in tasks directory '" + tasks_dir.string()
        + "' (expected '" + file.string() + "')");
  auto contents = toml_check::read_file(file, max_task_bytes);
  if (!contents.ok)
    return make_error(error::invalid_task,
      "cannot read task file '" + file.string() + "': " + contents.why);
  auto root = toml_check::parse(contents.text, file, error::invalid_task);
  if (!root)
    return root.error();
  problems out{file.string()};
  auto spec = read_task(*root, folder, name, overrides, out);
  if (!out.empty())
    return out.to_error(error::invalid_task);
  return spec;
}

caf::expected<std::vector<std::string>> list_tasks(const fs::path& tasks_dir) {
  auto fail = [&](const std::error_code& ec) {
    return make_error(error::invalid_task, "cannot list tasks directory '"
                                             + tasks_dir.string()
                                             + "': " + ec.message());
  };
  std::error_code ec;
  fs::directory_iterator i{tasks_dir, ec};
  if (ec)
    return fail(ec);
  std::vector<std::string> names;
  for (; i != fs::directory_iterator{}; i.increment(ec)) {
    std::error_code ignored;
    if (fs::is_regular_file(i->path() / "task.toml", ignored))
      names.push_back(i->path().filename().string());
  }
  if (ec)
    return fail(ec);
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace eat
