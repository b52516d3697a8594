#include "devices/kinds/problem.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "devices/kinds/uniform_fill.hpp"

namespace eat::devices {

namespace {

/// fp32 kinds have at most this many inputs (gemm: 2).
constexpr size_t max_fp32_inputs = 8;

size_t elements_of(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (auto d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// Offsets of `n - 1` requests whose lengths add up to `total`: 0 first,
/// non-decreasing, `total` last; each length >= 1 when total >= n - 1.
void fill_indptr(typed_buffer& buf, int64_t total, rng& gen) {
  auto n = buf.size();
  buf.set(0, 0);
  if (n < 2)
    return;
  auto requests = static_cast<int64_t>(n - 1);
  auto floor = total >= requests ? int64_t{1} : int64_t{0};
  auto spare = total - floor * requests;
  std::vector<int64_t> cuts(static_cast<size_t>(requests - 1));
  for (auto& c : cuts)
    c = static_cast<int64_t>(gen.below(static_cast<uint64_t>(spare) + 1));
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(spare);
  int64_t offset = 0;
  int64_t previous = 0;
  for (size_t i = 0; i < cuts.size(); ++i) {
    offset += floor + (cuts[i] - previous);
    previous = cuts[i];
    buf.set(i + 1, static_cast<double>(offset));
  }
}

/// Distinct ids from [0, range) in random order.
void fill_permutation(typed_buffer& buf, int64_t range, rng& gen) {
  auto n = buf.size();
  auto r = static_cast<uint64_t>(range);
  if (r <= 4 * n + 1024) {
    std::vector<int64_t> ids(r);
    for (uint64_t i = 0; i < r; ++i)
      ids[i] = static_cast<int64_t>(i);
    for (size_t i = 0; i < n; ++i) {
      auto j = i + gen.below(r - i);
      std::swap(ids[i], ids[j]);
      buf.set(i, static_cast<double>(ids[i]));
    }
    return;
  }
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < n;) {
    auto id = gen.below(r);
    if (seen.insert(id).second)
      buf.set(i++, static_cast<double>(id));
  }
}

double draw_uniform(const tensor_arg& a, dtype t, rng& gen) {
  auto x = gen.uniform(a.low, a.high);
  return is_floating(t) ? x : std::floor(x);
}

/// Draws every element of `buf`.
void draw_input(
  const tensor_arg& a, input_style style, rng& gen, typed_buffer& buf) {
  if (a.scalar) {
    buf.set(0, a.value);
  } else if (a.generator == "indptr") {
    fill_indptr(buf, a.extent, gen);
  } else if (a.generator == "permutation") {
    fill_permutation(buf, a.extent, gen);
  } else if (a.generator == "uniform") {
    for (size_t i = 0; i < buf.size(); ++i)
      buf.set(i, draw_uniform(a, buf.type(), gen));
  } else {
    for (size_t i = 0; i < buf.size(); ++i)
      buf.set(i, draw_value(style, gen));
  }
}

tensor_layout layout_of(const tensor_arg& a) {
  tensor_layout t;
  t.name = a.name;
  t.type = parse_dtype(a.dtype).value_or(dtype::float32);
  t.elements = elements_of(a.shape);
  t.shape = a.shape;
  t.tol = tolerance_of(a);
  return t;
}

} // namespace

problem problem::make(const kind& k, const workload& w, const tolerance& tol) {
  problem p;
  p.kind_ = &k;
  p.dims_ = k.dims(w);
  if (!k.is_fp32()) {
    for (const auto& a : w.inputs)
      p.inputs_.push_back(layout_of(a));
    for (const auto& a : w.outputs)
      p.outputs_.push_back(layout_of(a));
    p.args_ = w.inputs;
    return p;
  }
  auto sizes = k.sizes(p.dims_);
  for (size_t i = 0; i < sizes.inputs.size(); ++i)
    p.inputs_.push_back(tensor_layout{
      "input" + std::to_string(i), dtype::float32, sizes.inputs[i], {}, {}});
  p.outputs_.push_back(
    tensor_layout{"output", dtype::float32, sizes.output, {}, tol});
  return p;
}

uint64_t problem::set_bytes() const {
  uint64_t total = 0;
  for (const auto& t : inputs_)
    total += t.elements * size_of(t.type);
  for (const auto& t : outputs_)
    total += 2 * t.elements * size_of(t.type);
  return total;
}

std::vector<typed_buffer> problem::make_inputs(
  input_style style, uint64_t seed) const {
  std::vector<typed_buffer> result;
  for (const auto& t : inputs_)
    result.emplace_back(t.type, t.elements);
  fill_inputs(style, seed, result);
  return result;
}

void problem::fill_inputs(
  input_style style, uint64_t seed, std::vector<typed_buffer>& inputs) const {
  if (kind_->is_fp32()) {
    float* pointers[max_fp32_inputs] = {};
    for (size_t i = 0; i < inputs.size() && i < max_fp32_inputs; ++i)
      pointers[i] = static_cast<float*>(inputs[i].data());
    kind_->fill_inputs(dims_, style, seed, pointers);
    return;
  }
  rng gen{seed};
  for (size_t i = 0; i < args_.size(); ++i)
    draw_input(args_[i], style, gen, inputs[i]);
}

std::optional<std::pair<double, double>> problem::redraw_range(
  size_t input) const {
  if (inputs_[input].elements == 0 || !is_floating(inputs_[input].type))
    return std::nullopt;
  if (kind_->is_fp32())
    return std::pair{-1.0, 1.0};
  const auto& a = args_[input];
  if (a.scalar)
    return std::nullopt;
  if (a.generator == "random")
    return std::pair{-1.0, 1.0};
  if (a.generator == "uniform")
    return std::pair{a.low, a.high};
  return std::nullopt;
}

void problem::redraw(std::vector<typed_buffer>& inputs, uint64_t seed) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (auto range = redraw_range(i))
      fill_uniform(inputs[i].type(), inputs[i].data(), inputs[i].size(),
        range->first, range->second, redraw_seed(seed, i));
}

void problem::call(
  void* fn, const void* const* inputs, void* const* outputs) const {
  call_entry(*kind_, fn, inputs, inputs_.size(), outputs, dims_.data());
}

void call_entry(const kind& k, void* fn, const void* const* inputs,
  size_t input_count, void* const* outputs, const int64_t* dims) {
  if (!k.is_fp32()) {
    using entry = void (*)(const void* const*, void* const*, const int64_t*);
    reinterpret_cast<entry>(fn)(inputs, outputs, dims);
    return;
  }
  const float* in[max_fp32_inputs] = {};
  for (size_t i = 0; i < input_count && i < max_fp32_inputs; ++i)
    in[i] = static_cast<const float*>(inputs[i]);
  k.call(fn, in, static_cast<float*>(outputs[0]), dims);
}

void problem::call_reference(
  void* fn, const void* const* inputs, double* const* outputs) const {
  if (!kind_->is_fp32()) {
    using entry = void (*)(const void* const*, double* const*, const int64_t*);
    reinterpret_cast<entry>(fn)(inputs, outputs, dims_.data());
    return;
  }
  const float* in[max_fp32_inputs] = {};
  for (size_t i = 0; i < inputs_.size() && i < max_fp32_inputs; ++i)
    in[i] = static_cast<const float*>(inputs[i]);
  kind_->call_reference(fn, in, outputs[0], dims_.data());
}

std::string problem::element_name(size_t output, size_t index) const {
  if (kind_->is_fp32())
    return kind_->element_name(index, dims_);
  const auto& t = outputs_[output];
  return devices::element_name(t.name, t.shape, index);
}

std::string element_name(
  const std::string& name, const std::vector<int64_t>& shape, size_t index) {
  std::vector<size_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    auto extent = static_cast<size_t>(std::max<int64_t>(shape[d], 1));
    at[d] = index % extent;
    index /= extent;
  }
  auto result = name;
  for (auto i : at)
    result += "[" + std::to_string(i) + "]";
  return result;
}

} // namespace eat::devices
