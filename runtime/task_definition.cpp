// Parsing of definition.json and workloads.jsonl (FlashInfer-Bench's
// Definition and Workload schemas) with nlohmann::ordered_json, so that the
// order of axes, inputs and outputs is the file's.

#include "runtime/task_definition.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "actors/protocol/error.hpp"
#include "runtime/toml_check.hpp"

namespace eat {

namespace {

using json = nlohmann::ordered_json;

/// dtypes the harness runs (FlashInfer-Bench knows more).
const std::set<std::string>& known_dtypes() {
  static const std::set<std::string> names{
    "float32", "float16", "bfloat16", "int32", "int64"};
  return names;
}

/// Largest axis value.
constexpr int64_t max_axis_value = INT32_MAX;

/// Whether `name` may name an axis or a tensor: axes appear in formulas and
/// constraints, tensors as `[inputs.<name>]` of task.toml, and both in the
/// skeleton `eat tasks import` writes (a name with a newline and a quote
/// wrote live TOML into it).
bool is_plain_name(const std::string& name) {
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  return !name.empty() && name.size() <= 64 && letter(name[0])
         && std::all_of(name.begin(), name.end(), [&](char c) {
              return letter(c) || (c >= '0' && c <= '9');
            });
}

std::string not_a_name(const std::string& where, const std::string& name) {
  return where + ": " + toml_check::quote(name)
         + " is not a name (up to 64 letters, digits and '_', not starting "
           "with a digit)";
}

/// Problems found in one document, one per line.
struct problem_list {
  std::vector<std::string> lines;

  void add(std::string what) {
    lines.push_back(std::move(what));
  }

  caf::error to_error() const {
    std::string text;
    for (const auto& l : lines)
      text += (text.empty() ? "" : "\n") + l;
    return make_error(error::invalid_task, text);
  }
};

std::string string_field(const json& obj, const std::string& key,
  const std::string& path, problem_list& out) {
  auto i = obj.find(key);
  if (i == obj.end()) {
    out.add(path + key + ": required field is missing");
    return {};
  }
  if (!i->is_string()) {
    out.add(path + key + ": expected a string, got " + i->dump());
    return {};
  }
  return i->get<std::string>();
}

std::vector<definition_axis> parse_axes(const json& root, problem_list& out) {
  std::vector<definition_axis> result;
  auto i = root.find("axes");
  if (i == root.end() || !i->is_object() || i->empty()) {
    out.add("axes: expected an object of axes, got "
            + (i == root.end() ? std::string{"nothing"} : i->dump()));
    return result;
  }
  for (const auto& [name, axis] : i->items()) {
    if (!is_plain_name(name)) {
      out.add(not_a_name("axes", name));
      continue;
    }
    auto path = "axes." + name;
    definition_axis a{name, false, 0};
    auto type = axis.is_object() ? axis.value("type", json{}) : json{};
    if (type == "const") {
      auto v = axis.value("value", json{});
      if (!v.is_number_integer() || v.get<int64_t>() < 0
          || v.get<int64_t>() > max_axis_value)
        out.add(
          path + ".value: expected an integer in [0, 2^31), got " + v.dump());
      else
        a = {name, true, v.get<int64_t>()};
    } else if (type != "var") {
      out.add(path
              + ": expected {\"type\": \"const\", \"value\": N} or "
                "{\"type\": \"var\"}, got "
              + axis.dump());
    }
    result.push_back(std::move(a));
  }
  return result;
}

definition_tensor parse_tensor(const std::string& name, const json& x,
  const std::string& path, const std::set<std::string>& axes,
  problem_list& out) {
  definition_tensor t{name, {}, false, {}};
  if (!x.is_object()) {
    out.add(
      path + ": expected an object with shape and dtype, got " + x.dump());
    return t;
  }
  t.dtype = string_field(x, "dtype", path + ".", out);
  if (!t.dtype.empty() && known_dtypes().count(t.dtype) == 0)
    out.add(path
            + ".dtype: expected one of bfloat16, float16, float32, "
              "int32, int64 (the dtypes eat runs), got \""
            + t.dtype + "\"");
  auto shape = x.find("shape");
  if (shape == x.end()) {
    out.add(path + ".shape: required field is missing (null for a scalar)");
  } else if (shape->is_null()) {
    t.scalar = true;
  } else if (!shape->is_array()) {
    out.add(path + ".shape: expected an array of axis names or null, got "
            + shape->dump());
  } else {
    for (size_t i = 0; i < shape->size(); ++i) {
      const auto& d = (*shape)[i];
      auto where = path + ".shape[" + std::to_string(i) + "]";
      if (!d.is_string())
        out.add(where + ": expected an axis name, got " + d.dump());
      else if (axes.count(d.get<std::string>()) == 0)
        out.add(where + ": unknown axis \"" + d.get<std::string>() + "\"");
      else
        t.shape.push_back(d.get<std::string>());
    }
  }
  return t;
}

std::vector<definition_tensor> parse_tensors(const json& root,
  const std::string& key, const std::set<std::string>& axes,
  problem_list& out) {
  std::vector<definition_tensor> result;
  auto i = root.find(key);
  if (i == root.end() || !i->is_object() || i->empty()) {
    out.add(key + ": expected a non-empty object of tensors, got "
            + (i == root.end() ? std::string{"nothing"} : i->dump()));
    return result;
  }
  for (const auto& [name, x] : i->items()) {
    if (is_plain_name(name))
      result.push_back(parse_tensor(name, x, key + "." + name, axes, out));
    else
      out.add(not_a_name(key, name));
  }
  return result;
}

std::vector<std::string> parse_constraints(
  const json& root, problem_list& out) {
  std::vector<std::string> result;
  auto i = root.find("constraints");
  if (i == root.end())
    return result;
  if (!i->is_array()) {
    out.add("constraints: expected an array of strings, got " + i->dump());
    return result;
  }
  for (size_t k = 0; k < i->size(); ++k) {
    if ((*i)[k].is_string())
      result.push_back((*i)[k].get<std::string>());
    else
      out.add("constraints[" + std::to_string(k) + "]: expected a string");
  }
  return result;
}

} // namespace

caf::expected<definition_info> parse_definition(std::string_view text) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& ex) {
    return make_error(
      error::invalid_task, std::string{"not JSON: "} + ex.what());
  }
  if (!root.is_object())
    return make_error(error::invalid_task, "expected a JSON object");
  problem_list out;
  definition_info def;
  def.name = string_field(root, "name", "", out);
  def.op_type = string_field(root, "op_type", "", out);
  def.axes = parse_axes(root, out);
  std::set<std::string> axes;
  for (const auto& a : def.axes)
    axes.insert(a.name);
  def.inputs = parse_tensors(root, "inputs", axes, out);
  def.outputs = parse_tensors(root, "outputs", axes, out);
  for (const auto& o : def.outputs)
    if (o.scalar)
      out.add("outputs." + o.name
              + ".shape: scalar outputs are not supported (give it shape [])");
  for (const auto& in : def.inputs)
    for (const auto& o : def.outputs)
      if (in.name == o.name)
        out.add("outputs." + o.name + ": an input has the same name");
  def.constraints = parse_constraints(root, out);
  if (!out.lines.empty())
    return out.to_error();
  return def;
}

namespace {

/// Reads one input descriptor of a workload line.
void parse_input(workload_line& w, const definition_tensor& t, const json& d,
  const std::string& where, problem_list& out) {
  auto type = d.is_object() ? d.value("type", json{}) : json{};
  if (type == "safetensors") {
    out.add(where + ": input '" + t.name
            + "' is loaded from a safetensors file, which eat cannot read "
              "(only \"random\" and \"scalar\" inputs)");
  } else if (type == "random") {
    if (t.scalar)
      out.add(where + ": input '" + t.name
              + "' is a scalar (shape null): give it {\"type\": \"scalar\", "
                "\"value\": x}");
    w.types[t.name] = "random";
  } else if (type == "scalar") {
    auto v = d.value("value", json{});
    if (!t.scalar)
      out.add(where + ": input '" + t.name
              + "' is a tensor: only scalar inputs (shape null) take a value");
    else if (v.is_boolean())
      w.scalars[t.name] = v.get<bool>() ? 1 : 0;
    else if (v.is_number())
      w.scalars[t.name] = v.get<double>();
    else
      out.add(where + ".value: expected a number, got " + v.dump());
    w.types[t.name] = "scalar";
  } else {
    out.add(where
            + ": expected {\"type\": \"random\"}, {\"type\": "
              "\"scalar\", \"value\": x} or a safetensors input, got "
            + d.dump());
  }
}

void parse_line_axes(workload_line& w, const json& body,
  const definition_info& def, const std::string& prefix, problem_list& out) {
  auto axes = body.value("axes", json::object());
  if (!axes.is_object()) {
    out.add(prefix + "axes: expected an object");
    return;
  }
  for (const auto& a : def.axes) {
    auto v = axes.find(a.name);
    if (a.is_const) {
      if (v != axes.end() && *v != a.value)
        out.add(prefix + "axes." + a.name + ": const axis is "
                + std::to_string(a.value) + ", got " + v->dump());
      continue;
    }
    if (v == axes.end())
      out.add(prefix + "axes." + a.name + ": value of var axis is missing");
    else if (!v->is_number_integer() || v->get<int64_t>() < 0
             || v->get<int64_t>() > max_axis_value)
      out.add(prefix + "axes." + a.name
              + ": expected an integer in [0, "
                "2^31), got "
              + v->dump());
    else
      w.axes[a.name] = v->get<int64_t>();
  }
  for (const auto& [name, v] : axes.items())
    if (std::none_of(
          def.axes.begin(), def.axes.end(), [&](const definition_axis& a) {
            return a.name == name;
          }))
      out.add(prefix + "axes." + name + ": not an axis of " + def.name);
}

/// Parses one line; returns false if it belongs to another definition.
bool parse_line(workload_line& w, const json& root, const definition_info& def,
  const std::string& prefix, problem_list& out) {
  auto body = root.contains("workload") ? root["workload"] : root;
  auto owner = root.value("definition", json{});
  if (owner.is_string() && owner.get<std::string>() != def.name)
    return false;
  if (!body.is_object()) {
    out.add(prefix + "workload: expected an object");
    return true;
  }
  w.uuid = body.value("uuid", std::string{});
  parse_line_axes(w, body, def, prefix, out);
  auto inputs = body.value("inputs", json::object());
  for (const auto& t : def.inputs) {
    auto d = inputs.find(t.name);
    if (d == inputs.end())
      out.add(prefix + "inputs." + t.name + ": input descriptor is missing");
    else
      parse_input(w, t, *d, prefix + "inputs." + t.name, out);
  }
  if (inputs.is_object())
    for (const auto& [name, d] : inputs.items())
      if (std::none_of(def.inputs.begin(), def.inputs.end(),
            [&](const definition_tensor& t) {
              return t.name == name;
            }))
        out.add(prefix + "inputs." + name + ": not an input of " + def.name);
  return true;
}

} // namespace

caf::expected<std::vector<workload_line>> parse_workloads(
  std::string_view text, const definition_info& def) {
  std::vector<workload_line> result;
  problem_list out;
  size_t line_no = 0;
  size_t others = 0;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{}
                                         : text.substr(end + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      continue;
    auto prefix = "line " + std::to_string(line_no) + ": ";
    json root;
    try {
      root = json::parse(line);
    } catch (const json::exception& ex) {
      out.add(prefix + "not JSON: " + ex.what());
      continue;
    }
    if (!root.is_object()) {
      out.add(prefix + "expected a JSON object");
      continue;
    }
    workload_line w;
    w.line = line_no;
    if (parse_line(w, root, def, prefix, out))
      result.push_back(std::move(w));
    else
      ++others;
  }
  if (out.lines.empty() && result.empty())
    out.add("no workload for definition \"" + def.name + "\" ("
            + std::to_string(others) + " line(s) for other definitions)");
  if (!out.lines.empty())
    return out.to_error();
  return result;
}

} // namespace eat
