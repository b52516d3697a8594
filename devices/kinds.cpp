#include "devices/kind.hpp"
#include "devices/kinds/tolerance.hpp"

#include <cmath>

namespace eat::devices {

// Defined in devices/kinds/<name>.cpp.
const kind& gemm_kind();
const kind& rmsnorm_kind();
const kind& softmax_kind();
const kind& definition_kind();

namespace {

/// The table of kinds: one line per file in devices/kinds/.
const std::vector<const kind*>& all_kinds() {
  static const std::vector<const kind*> table{
    &gemm_kind(), &rmsnorm_kind(), &softmax_kind(), &definition_kind()};
  return table;
}

} // namespace

const kind* find_kind(std::string_view name) {
  for (const auto* k : all_kinds())
    if (name == k->name)
      return k;
  return nullptr;
}

std::string kind_names() {
  std::string result;
  for (const auto* k : all_kinds()) {
    if (!result.empty())
      result += ", ";
    result += k->name;
  }
  return result;
}

std::string check_task(const task_spec& task) {
  const auto* k = find_kind(task.kind);
  if (k == nullptr)
    return "unknown task kind '" + task.kind
           + "' (this harness knows: " + kind_names() + ")";
  if (k->is_fp32() && task.dtype != "float32")
    return "dtype '" + task.dtype + "' is not supported by kind '" + task.kind
           + "' (only float32)";
  if (auto why = check_tolerance(tolerance_of(task)); !why.empty())
    return "invalid tolerances: " + why;
  if (task.workloads.empty())
    return "task '" + task.name + "' has no workloads";
  for (const auto& w : task.workloads)
    if (auto why = k->check_workload(w); !why.empty())
      return "workload '" + w.name + "': " + why;
  return {};
}

float draw_value(input_style style, rng& gen) {
  switch (style) {
    case input_style::offset_large:
      return static_cast<float>(gen.uniform(-2.0, 14.0));
    case input_style::random: break;
  }
  return static_cast<float>(gen.uniform(-1.0, 1.0));
}

void draw_inputs(const std::vector<size_t>& sizes, input_style style,
  uint64_t seed, float* const* inputs) {
  rng gen{seed};
  for (size_t i = 0; i < sizes.size(); ++i)
    for (size_t j = 0; j < sizes[i]; ++j)
      inputs[i][j] = draw_value(style, gen);
}

std::vector<std::vector<float>> make_inputs(
  const kind& k, const problem_dims& dims, input_style style, uint64_t seed) {
  auto sizes = k.sizes(dims).inputs;
  std::vector<std::vector<float>> result;
  std::vector<float*> pointers;
  for (auto n : sizes)
    result.emplace_back(n);
  for (auto& buf : result)
    pointers.push_back(buf.data());
  k.fill_inputs(dims, style, seed, pointers.data());
  return result;
}

} // namespace eat::devices
