#include "devices/kind.hpp"

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
  if (!(task.atol >= 0) || !(task.rtol >= 0))
    return "tolerances must be non-negative numbers";
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

std::vector<std::vector<float>> draw_inputs(
  const std::vector<size_t>& sizes, input_style style, uint64_t seed) {
  rng gen{seed};
  std::vector<std::vector<float>> result;
  result.reserve(sizes.size());
  for (auto n : sizes) {
    std::vector<float> buf(n);
    for (auto& x : buf)
      x = draw_value(style, gen);
    result.push_back(std::move(buf));
  }
  return result;
}

} // namespace eat::devices
