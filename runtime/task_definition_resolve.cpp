// The definition keys of task.toml and the resolution of each workload line
// into a self-contained workload (docs/tasks.md, "Definition tasks").

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "actors/protocol/error.hpp"
#include "runtime/axis_formula.hpp"
#include "runtime/task_definition.hpp"
#include "runtime/task_tolerance.hpp"

namespace fs = std::filesystem;

namespace eat {

namespace {

/// Longest workload name made of the variable axes' values.
constexpr size_t max_axes_name = 24;

/// Renames the workloads after their variable axes ("m1", "m256") when
/// every such name is short and unique; otherwise they keep the uuid's
/// first 8 characters (the uuid itself is kept for exported traces).
void name_by_axes(const definition_info& def, std::vector<workload>& ws) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& w : ws) {
    std::string name;
    for (const auto& a : def.axes) {
      if (a.is_const)
        continue;
      std::string lower = a.name;
      std::transform(lower.begin(), lower.end(), lower.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      name += (name.empty() ? "" : "_") + lower + std::to_string(w.axes.at(a.name));
    }
    if (name.empty() || name.size() > max_axes_name || !seen.insert(name).second)
      return;
    names.push_back(std::move(name));
  }
  for (size_t i = 0; i < ws.size(); ++i)
    ws[i].name = std::move(names[i]);
}

using toml_check::number_rule;
using toml_check::problems;
using toml_check::string_rule;
using toml_check::table_reader;

/// definition.json and workloads.jsonl larger than this are refused.
constexpr size_t max_json_bytes = size_t{64} << 20;

constexpr number_rule finite{"a finite number", [](double x) {
                               return std::isfinite(x);
                             }};
constexpr string_rule relative_path{
  task_file_path_expected, is_task_file_path};
constexpr string_rule any_string{"a string", [](std::string_view) {
                                   return true;
                                 }};
constexpr string_rule generator_name{
  "\"indptr\", \"permutation\" or \"uniform\"", [](std::string_view x) {
    return x == "indptr" || x == "permutation" || x == "uniform";
  }};

bool is_int(const std::string& dtype) {
  return dtype == "int32" || dtype == "int64";
}

/// Default tolerance of an output dtype (BENCHMARK-PROTOCOL.md, 2).
double default_tolerance(const std::string& dtype) {
  if (dtype == "float32")
    return 1e-4;
  return is_int(dtype) ? 0 : 1e-2;
}

/// A file named by a key of task.toml, read whole.
std::optional<std::string> read_named_file(table_reader& t,
  std::string_view key, const fs::path& folder, fs::path& path) {
  if (!t.require(key))
    return std::nullopt;
  auto name = t.string(key, relative_path);
  if (!name)
    return std::nullopt;
  path = folder / *name;
  if (auto why = leaves_tasks_dir(folder, path); !why.empty()) {
    t.fail(key, why);
    return std::nullopt;
  }
  auto contents = toml_check::read_file(path, max_json_bytes);
  if (!contents.ok) {
    t.fail(key, "cannot read '" + path.string() + "': " + contents.why);
    return std::nullopt;
  }
  return std::move(contents.text);
}

/// The workloads file given instead of the task's own (`eat tasks check
/// --workloads`, a run's `run.workloads`), read whole.
std::optional<std::string> read_override(
  table_reader& t, const fs::path& file, fs::path& path) {
  path = file.lexically_normal();
  auto contents = toml_check::read_file(path, max_json_bytes);
  if (!contents.ok) {
    t.fail("workloads", "cannot read '" + path.string()
                          + "' (given instead of the task's workloads): "
                          + contents.why);
    return std::nullopt;
  }
  return std::move(contents.text);
}

/// Records each line of a multi-line error at `key`, prefixed by `file`.
void fail_lines(table_reader& t, std::string_view key, const std::string& file,
  const caf::error& err) {
  // The message alone, without render()'s "invalid_task: " prefix.
  const auto& ctx = err.context();
  auto text = ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0)
                                                : render(err);
  size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    auto line = text.substr(start, end - start);
    if (!line.empty())
      t.fail(key, file + ": " + line);
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
}

/// Settings of task.toml that refine the definition.
struct definition_settings {
  std::map<std::string, tensor_arg> generators;
  std::map<std::string, devices::tolerance> tolerances;
  /// Axis a generator's bound names, by input.
  std::map<std::string, std::string> bound_axis;
  std::string flops;
  std::string bytes;
};

void read_generator(table_reader& g, const definition_tensor& in,
  const std::set<std::string>& axes, definition_settings& s) {
  tensor_arg arg;
  if (!g.require("generator"))
    return;
  auto gen = g.string("generator", generator_name);
  if (!gen)
    return;
  arg.generator = *gen;
  if (in.scalar)
    g.fail(
      "generator", "input '" + in.name
                     + "' is a scalar: its value comes from each workload");
  if (*gen == "uniform") {
    arg.low = g.number("low", finite).value_or(-1);
    arg.high = g.number("high", finite).value_or(1);
    if (!(arg.low < arg.high))
      g.fail("high", "expected high > low");
  } else {
    auto key = *gen == "indptr" ? "total" : "range";
    if (!is_int(in.dtype))
      g.fail("generator", *gen + " needs an int32 or int64 input, '" + in.name
                            + "' is " + in.dtype);
    if (in.shape.size() != 1)
      g.fail("generator", *gen + " needs a one-dimensional input");
    if (g.require(key))
      if (auto axis = g.string(key, any_string)) {
        if (axes.count(*axis) == 0)
          g.fail(key, "unknown axis " + toml_check::quote(*axis));
        else
          s.bound_axis[in.name] = *axis;
      }
  }
  s.generators[in.name] = arg;
}

void read_inputs(table_reader& t, const definition_info& def,
  definition_settings& s, problems& out) {
  std::set<std::string> axes;
  for (const auto& a : def.axes)
    axes.insert(a.name);
  auto* inputs = t.table("inputs");
  for (const auto& in : def.inputs) {
    const toml::table* table = nullptr;
    if (inputs)
      if (auto* node = inputs->get(in.name))
        table = node->as_table();
    if (!table) {
      if (is_int(in.dtype) && !in.scalar)
        t.fail("inputs", "input '" + in.name + "' is " + in.dtype
                           + ": integer inputs need a generator, e.g. [inputs."
                           + in.name
                           + "] generator = \"indptr\", total = \"<axis>\" "
                             "or generator = \"permutation\", range = "
                             "\"<axis>\" (docs/tasks.md)");
      continue;
    }
    auto path = t.full("inputs") + "." + in.name;
    table_reader g{
      table, path, path, {"generator", "total", "range", "low", "high"}, out};
    read_generator(g, in, axes, s);
  }
  if (inputs)
    for (const auto& [key, node] : *inputs)
      if (std::none_of(
            def.inputs.begin(), def.inputs.end(), [&](const auto& in) {
              return in.name == key.str();
            }))
        out.add(node.source(), t.full("inputs") + "." + std::string{key.str()}
                                 + ": not an input of the definition");
}

void read_tolerances(table_reader& t, const definition_info& def,
  definition_settings& s, problems& out) {
  auto* tols = t.table("tolerances");
  for (const auto& o : def.outputs) {
    auto def_tol = default_tolerance(o.dtype);
    s.tolerances[o.name] = {def_tol, def_tol, 1, 0};
    const toml::table* table = nullptr;
    if (tols)
      if (auto* node = tols->get(o.name))
        table = node->as_table();
    if (!table)
      continue;
    auto path = t.full("tolerances") + "." + o.name;
    table_reader r{
      table, path, path, {tolerance_keys.begin(), tolerance_keys.end()}, out};
    s.tolerances[o.name] = read_tolerance(r, def_tol);
  }
  if (tols)
    for (const auto& [key, node] : *tols)
      if (std::none_of(
            def.outputs.begin(), def.outputs.end(), [&](const auto& o) {
              return o.name == key.str();
            }))
        out.add(node.source(), t.full("tolerances") + "."
                                 + std::string{key.str()}
                                 + ": not an output of the definition");
}

/// Checks a formula against the axes (all bound to 1).
void read_formula(table_reader& t, std::string_view key,
  const definition_info& def, std::string& formula) {
  if (!t.require(key))
    return;
  auto text = t.string(key, any_string);
  if (!text)
    return;
  std::map<std::string, int64_t> ones;
  for (const auto& a : def.axes)
    ones[a.name] = 1;
  if (auto x = evaluate_formula(*text, ones); !x)
    fail_lines(t, key, toml_check::quote(*text), x.error());
  else
    formula = *text;
}

} // namespace

// Defined in task_definition_workload.cpp.
caf::expected<workload> resolve_workload(const definition_info& def,
  const workload_line& line, const std::map<std::string, tensor_arg>& gens,
  const std::map<std::string, std::string>& bound_axis,
  const std::map<std::string, devices::tolerance>& tolerances,
  const std::string& flops, const std::string& bytes);

bool is_task_file_path(std::string_view path) {
  if (path.empty())
    return false;
  fs::path p{path};
  if (!p.is_relative())
    return false;
  std::vector<fs::path> parts{p.begin(), p.end()};
  // ../<task>/<path>: up out of this task's folder, into a sibling's.
  size_t first = 0;
  if (parts.size() >= 3 && parts[0] == ".." && parts[1] != ".."
      && parts[1] != ".")
    first = 2;
  return std::none_of(parts.begin() + static_cast<std::ptrdiff_t>(first),
    parts.end(), [](const fs::path& part) { return part == ".."; });
}

std::string leaves_tasks_dir(const fs::path& folder, const fs::path& path) {
  std::error_code ec;
  auto root = fs::weakly_canonical(fs::absolute(folder), ec).parent_path();
  if (ec)
    return {}; // reading the file says what is wrong
  auto target = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec)
    return {};
  auto rel = target.lexically_relative(root);
  if (!rel.empty() && *rel.begin() != ".." && rel.is_relative())
    return {};
  return "'" + path.string() + "' leads to '" + target.string()
         + "', outside the tasks directory '" + root.string() + "'";
}

void read_definition_task(table_reader& t, const fs::path& folder,
  task_spec& spec, problems& out, const fs::path& workloads) {
  fs::path def_path;
  auto def_text = read_named_file(t, "definition", folder, def_path);
  if (!def_text)
    return;
  auto def = parse_definition(*def_text);
  if (!def) {
    fail_lines(t, "definition", def_path.string(), def.error());
    return;
  }
  spec.definition = std::move(*def_text);
  definition_settings s;
  read_inputs(t, *def, s, out);
  read_tolerances(t, *def, s, out);
  read_formula(t, "flops", *def, s.flops);
  read_formula(t, "bytes", *def, s.bytes);
  spec.flops = s.flops;
  spec.bytes = s.bytes;
  spec.dtype = def->outputs.front().dtype;
  devices::set_tolerance(spec, s.tolerances[def->outputs.front().name]);
  fs::path lines_path;
  auto lines_text = workloads.empty()
                      ? read_named_file(t, "workloads", folder, lines_path)
                      : read_override(t, folder / workloads, lines_path);
  if (!lines_text)
    return;
  auto lines = parse_workloads(*lines_text, *def);
  if (!lines) {
    fail_lines(t, "workloads", lines_path.string(), lines.error());
    return;
  }
  if (!out.empty() || s.flops.empty() || s.bytes.empty())
    return; // resolution needs sound settings
  std::set<std::string> names;
  for (const auto& line : *lines) {
    auto w = resolve_workload(
      *def, line, s.generators, s.bound_axis, s.tolerances, s.flops, s.bytes);
    if (!w) {
      fail_lines(t, "workloads", lines_path.string(), w.error());
      continue;
    }
    if (!names.insert(w->name).second)
      t.fail("workloads",
        lines_path.string() + ": line " + std::to_string(line.line)
          + ": duplicate workload name " + toml_check::quote(w->name));
    spec.workloads.push_back(std::move(*w));
  }
  name_by_axes(*def, spec.workloads);
}

} // namespace eat
