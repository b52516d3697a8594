// Kind "softmax": row-wise softmax over a rows×cols fp32 matrix, row-major
// (docs/harness.md):
//
//   out[i][j] = exp(x[i][j]) / sum_k exp(x[i][k])
//
// Entry points:
//
//   extern "C" void eat_softmax(const float* x, float* out, int64_t rows,
//                               int64_t cols);
//   extern "C" void eat_softmax_reference(const float* x, double* out,
//                                         int64_t rows, int64_t cols);
//
// The structured case shifts whole rows by +100 or -120: exp overflows (or
// every term underflows) in fp32 unless the kernel subtracts the row maximum,
// so a numerically unstable kernel produces Inf or NaN and fails.

#include "devices/kind.hpp"

namespace eat::devices {

namespace {

using softmax_fn = void (*)(const float*, float*, int64_t, int64_t);
using softmax_reference_fn = void (*)(const float*, double*, int64_t, int64_t);

/// Largest element count of one buffer.
constexpr int64_t max_elements = int64_t{1} << 34;

/// Random cases spread logits over [-8, 8): probabilities span ~7 decades.
constexpr float random_scale = 8.0f;

/// Row shifts of the structured case, in turn: beyond fp32's exp range
/// (exp(88.7) overflows, exp(-103) is denormal, exp(-120) is 0).
constexpr float row_shifts[] = {100.0f, -120.0f, 0.0f};

std::string check_workload(const workload& w) {
  for (const char* axis : {"rows", "cols"}) {
    auto i = w.axes.find(axis);
    if (i == w.axes.end())
      return std::string{"missing axis '"} + axis
             + "' (softmax needs rows, cols)";
    if (i->second < 1 || i->second > max_elements)
      return std::string{"axis '"} + axis + "' must be in [1, 2^34]";
  }
  if (w.axes.at("rows") > max_elements / w.axes.at("cols"))
    return "buffers larger than 2^34 elements";
  return {};
}

problem_dims dims(const workload& w) {
  return {w.axes.at("rows"), w.axes.at("cols")};
}

buffer_sizes sizes(const problem_dims& d) {
  auto n = static_cast<size_t>(d[0]) * static_cast<size_t>(d[1]);
  return {{n}, n};
}

void fill_inputs(const problem_dims& d, input_style style, uint64_t seed,
  float* const* inputs) {
  auto n = sizes(d).inputs;
  draw_inputs(n, style, seed, inputs);
  auto cols = static_cast<size_t>(d[1]);
  auto* x = inputs[0];
  for (size_t i = 0; i < n[0]; ++i) {
    if (style == input_style::random)
      x[i] *= random_scale;
    else
      x[i] += row_shifts[(i / cols) % std::size(row_shifts)];
  }
}

void call(void* fn, const float* const* in, float* out, const int64_t* d) {
  reinterpret_cast<softmax_fn>(fn)(in[0], out, d[0], d[1]);
}

void call_reference(
  void* fn, const float* const* in, double* out, const int64_t* d) {
  reinterpret_cast<softmax_reference_fn>(fn)(in[0], out, d[0], d[1]);
}

std::string element_name(size_t index, const problem_dims& d) {
  auto cols = static_cast<size_t>(d[1]);
  return "out[" + std::to_string(index / cols) + "]["
         + std::to_string(index % cols) + "]";
}

/// 4·rows·cols: per element a subtraction of the maximum, an exponential
/// (counted as one), a sum and a scaling; comparisons are not counted.
double useful_flops(const problem_dims& d) {
  return 4.0 * static_cast<double>(d[0]) * static_cast<double>(d[1]);
}

/// 8·rows·cols: x read once and out written once, in fp32.
double compulsory_bytes(const problem_dims& d) {
  return 8.0 * static_cast<double>(d[0]) * static_cast<double>(d[1]);
}

} // namespace

const kind& softmax_kind() {
  static const kind instance{"softmax", "eat_softmax", "eat_softmax_reference",
    check_workload, dims, sizes, fill_inputs, call, call_reference,
    element_name, useful_flops, compulsory_bytes};
  return instance;
}

} // namespace eat::devices
