// One workload line resolved against its definition and the task's settings:
// numbers for every shape, scalar values, generators with their bounds,
// tolerances, and the formulas evaluated (docs/tasks.md).

#include <algorithm>
#include <cmath>

#include "actors/protocol/error.hpp"
#include "devices/kind.hpp"
#include "runtime/axis_formula.hpp"
#include "runtime/task_definition.hpp"
#include "runtime/task_tolerance.hpp"

namespace eat {

namespace {

/// Checks the constraints written as "<formula> == <formula>" over axes;
/// others (e.g. "n == kv_indptr[-1].item()") are documentation here.
std::string check_constraints(
  const definition_info& def, const std::map<std::string, int64_t>& axes) {
  for (const auto& c : def.constraints) {
    auto at = c.find("==");
    if (at == std::string::npos)
      continue;
    auto lhs = evaluate_formula(c.substr(0, at), axes);
    auto rhs = evaluate_formula(c.substr(at + 2), axes);
    if (lhs && rhs && *lhs != *rhs)
      return "violates the constraint \"" + c + "\" (" + std::to_string(*lhs)
             + " != " + std::to_string(*rhs) + ")";
  }
  return {};
}

std::vector<int64_t> shape_of(
  const definition_tensor& t, const std::map<std::string, int64_t>& axes) {
  std::vector<int64_t> result;
  for (const auto& d : t.shape)
    result.push_back(axes.at(d));
  return result;
}

/// Returns why the generator cannot fill `arg`, or "".
std::string check_bounds(const tensor_arg& arg) {
  if (arg.shape.size() != 1)
    return {};
  auto n = arg.shape[0];
  if (arg.generator == "indptr" && (n < 1 || (n == 1 && arg.extent != 0)))
    return "input '" + arg.name + "' (indptr) has " + std::to_string(n)
           + " element(s): it needs at least one, and a total of 0 when it "
             "has exactly one";
  if (arg.generator == "permutation" && n > arg.extent)
    return "input '" + arg.name + "' (permutation) needs " + std::to_string(n)
           + " distinct ids from a range of only " + std::to_string(arg.extent);
  if (arg.dtype == "int32" && arg.extent > INT32_MAX)
    return "input '" + arg.name + "': bound does not fit int32";
  return {};
}

std::string short_name(const workload_line& line) {
  if (line.uuid.empty())
    return "line" + std::to_string(line.line);
  return line.uuid.substr(0, 8);
}

} // namespace

caf::expected<workload> resolve_workload(const definition_info& def,
  const workload_line& line, const std::map<std::string, tensor_arg>& gens,
  const std::map<std::string, std::string>& bound_axis,
  const std::map<std::string, devices::tolerance>& tolerances,
  const std::string& flops, const std::string& bytes) {
  auto fail = [&](const std::string& why) {
    return make_error(
      error::invalid_task, "line " + std::to_string(line.line) + ": " + why);
  };
  workload w;
  w.name = short_name(line);
  w.uuid = line.uuid;
  for (const auto& a : def.axes) {
    auto v = a.is_const ? a.value : line.axes.at(a.name);
    w.axes[a.name] = v;
    w.abi_axes.push_back(v);
  }
  if (auto why = check_constraints(def, w.axes); !why.empty())
    return fail(why);
  for (const auto& t : def.inputs) {
    tensor_arg arg;
    if (auto g = gens.find(t.name); g != gens.end())
      arg = g->second;
    arg.name = t.name;
    arg.dtype = t.dtype;
    arg.shape = shape_of(t, w.axes);
    arg.scalar = t.scalar;
    if (t.scalar)
      arg.value = line.scalars.at(t.name);
    if (auto b = bound_axis.find(t.name); b != bound_axis.end())
      arg.extent = w.axes.at(b->second);
    if (auto why = check_bounds(arg); !why.empty())
      return fail(why);
    w.inputs.push_back(std::move(arg));
  }
  for (const auto& t : def.outputs) {
    tensor_arg arg;
    arg.name = t.name;
    arg.dtype = t.dtype;
    arg.shape = shape_of(t, w.axes);
    devices::set_tolerance(arg, tolerances.at(t.name));
    w.outputs.push_back(std::move(arg));
  }
  auto f = evaluate_formula(flops, w.axes);
  auto b = evaluate_formula(bytes, w.axes);
  if (!f || !b || *f < 0 || *b < 0)
    return fail("the flops or bytes formula is negative or not finite here");
  w.flops = *f;
  w.bytes = *b;
  // What the harness would refuse at every evaluation (a tensor of more
  // than 2^34 elements): refused here, so that a run does not spend its
  // budget on it.
  if (const auto* k = devices::find_kind("definition"))
    if (auto why = k->check_workload(w); !why.empty())
      return fail(why);
  return w;
}

} // namespace eat
