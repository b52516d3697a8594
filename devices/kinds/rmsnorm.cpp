// Kind "rmsnorm": root-mean-square normalisation of each row of x, scaled by
// a weight per column, in fp32 storage (docs/harness.md):
//
//   out[i][j] = x[i][j] * w[j] / sqrt(mean_j(x[i][:]^2) + 1e-5)
//
// x and out are batch×hidden, row-major; w has `hidden` elements. Entry
// points:
//
//   extern "C" void eat_rmsnorm(const float* x, const float* w, float* out,
//                               int64_t batch, int64_t hidden);
//   extern "C" void eat_rmsnorm_reference(const float* x, const float* w,
//                                         double* out, int64_t batch,
//                                         int64_t hidden);

#include "devices/kind.hpp"

namespace eat::devices {

namespace {

using rmsnorm_fn = void (*)(const float*, const float*, float*, int64_t, int64_t);
using rmsnorm_reference_fn
  = void (*)(const float*, const float*, double*, int64_t, int64_t);

/// Largest element count of one buffer.
constexpr int64_t max_elements = int64_t{1} << 34;

/// Rows whose index is 1 modulo this are drawn 1000x smaller, so that their
/// mean square (~3e-7) is far below eps: a kernel that drops or misplaces
/// eps is wrong there.
constexpr int64_t tiny_row_period = 3;

std::string check_workload(const workload& w) {
  for (const char* axis : {"batch", "hidden"}) {
    auto i = w.axes.find(axis);
    if (i == w.axes.end())
      return std::string{"missing axis '"} + axis
             + "' (rmsnorm needs batch, hidden)";
    if (i->second < 1 || i->second > max_elements)
      return std::string{"axis '"} + axis + "' must be in [1, 2^34]";
  }
  if (w.axes.at("batch") > max_elements / w.axes.at("hidden"))
    return "buffers larger than 2^34 elements";
  return {};
}

problem_dims dims(const workload& w) {
  return {w.axes.at("batch"), w.axes.at("hidden")};
}

buffer_sizes sizes(const problem_dims& d) {
  auto batch = static_cast<size_t>(d[0]);
  auto hidden = static_cast<size_t>(d[1]);
  return {{batch * hidden, hidden}, batch * hidden};
}

/// x in `style`, with every third row (from row 1) scaled down to probe eps;
/// the weights in [0.5, 1.5) for random cases, in `style` otherwise.
void fill_inputs(const problem_dims& d, input_style style, uint64_t seed,
  float* const* inputs) {
  draw_inputs(sizes(d).inputs, style, seed, inputs);
  auto hidden = static_cast<size_t>(d[1]);
  auto* x = inputs[0];
  for (size_t row = 1; row < static_cast<size_t>(d[0]); row += tiny_row_period)
    for (size_t j = 0; j < hidden; ++j)
      x[row * hidden + j] *= 1e-3f;
  if (style == input_style::random)
    for (size_t j = 0; j < hidden; ++j)
      inputs[1][j] = 1.0f + 0.5f * inputs[1][j];
}

void call(void* fn, const float* const* in, float* out, const int64_t* d) {
  reinterpret_cast<rmsnorm_fn>(fn)(in[0], in[1], out, d[0], d[1]);
}

void call_reference(
  void* fn, const float* const* in, double* out, const int64_t* d) {
  reinterpret_cast<rmsnorm_reference_fn>(fn)(in[0], in[1], out, d[0], d[1]);
}

std::string element_name(size_t index, const problem_dims& d) {
  auto hidden = static_cast<size_t>(d[1]);
  return "out[" + std::to_string(index / hidden) + "]["
         + std::to_string(index % hidden) + "]";
}

/// 4·batch·hidden: a square and a sum per element for the mean, then two
/// multiplications (by the row's inverse norm and by the weight).
double useful_flops(const problem_dims& d) {
  return 4.0 * static_cast<double>(d[0]) * static_cast<double>(d[1]);
}

/// 4·(2·batch·hidden + hidden): x read once, out written once, w read once.
double compulsory_bytes(const problem_dims& d) {
  auto batch = static_cast<double>(d[0]);
  auto hidden = static_cast<double>(d[1]);
  return 4.0 * (2.0 * batch * hidden + hidden);
}

} // namespace

const kind& rmsnorm_kind() {
  static const kind instance{"rmsnorm", "eat_rmsnorm", "eat_rmsnorm_reference",
    check_workload, dims, sizes, fill_inputs, call, call_reference,
    element_name, useful_flops, compulsory_bytes};
  return instance;
}

} // namespace eat::devices
