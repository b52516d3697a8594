// Kind "gemm": C = A·B in row-major fp32, A m×k, B k×n, C m×n; the candidate
// overwrites C. Entry points (docs/harness.md):
//
//   extern "C" void eat_gemm(const float* a, const float* b, float* c,
//                            int64_t m, int64_t n, int64_t k);
//   extern "C" void eat_gemm_reference(const float* a, const float* b,
//                                      double* c, int64_t m, int64_t n,
//                                      int64_t k);

#include "devices/kind.hpp"

namespace eat::devices {

namespace {

using gemm_fn
  = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);
using gemm_reference_fn
  = void (*)(const float*, const float*, double*, int64_t, int64_t, int64_t);

/// Largest element count of one buffer (keeps every size in int64 and size_t
/// arithmetic far from overflow).
constexpr int64_t max_elements = int64_t{1} << 34;

std::string check_workload(const workload& w) {
  for (const char* axis : {"m", "n", "k"}) {
    auto i = w.axes.find(axis);
    if (i == w.axes.end())
      return std::string{"missing axis '"} + axis + "' (gemm needs m, n, k)";
    if (i->second < 1 || i->second > max_elements)
      return std::string{"axis '"} + axis + "' must be in [1, 2^34]";
  }
  auto m = w.axes.at("m");
  auto n = w.axes.at("n");
  auto k = w.axes.at("k");
  if (m > max_elements / k || k > max_elements / n || m > max_elements / n)
    return "buffers larger than 2^34 elements";
  return {};
}

problem_dims dims(const workload& w) {
  return {w.axes.at("m"), w.axes.at("n"), w.axes.at("k")};
}

buffer_sizes sizes(const problem_dims& d) {
  auto m = static_cast<size_t>(d[0]);
  auto n = static_cast<size_t>(d[1]);
  auto k = static_cast<size_t>(d[2]);
  return {{m * k, k * n}, m * n};
}

void fill_inputs(const problem_dims& d, input_style style, uint64_t seed,
  float* const* inputs) {
  draw_inputs(sizes(d).inputs, style, seed, inputs);
}

void call(void* fn, const float* const* in, float* out, const int64_t* d) {
  reinterpret_cast<gemm_fn>(fn)(in[0], in[1], out, d[0], d[1], d[2]);
}

void call_reference(
  void* fn, const float* const* in, double* out, const int64_t* d) {
  reinterpret_cast<gemm_reference_fn>(fn)(in[0], in[1], out, d[0], d[1], d[2]);
}

std::string element_name(size_t index, const problem_dims& d) {
  auto n = static_cast<size_t>(d[1]);
  return "C[" + std::to_string(index / n) + "][" + std::to_string(index % n)
         + "]";
}

/// 2·m·n·k: one multiply and one add per term of each dot product.
double useful_flops(const problem_dims& d) {
  return 2.0 * static_cast<double>(d[0]) * static_cast<double>(d[1])
         * static_cast<double>(d[2]);
}

/// 4·(m·k + k·n + m·n): A and B read once, C written once, in fp32.
double compulsory_bytes(const problem_dims& d) {
  auto m = static_cast<double>(d[0]);
  auto n = static_cast<double>(d[1]);
  auto k = static_cast<double>(d[2]);
  return 4.0 * (m * k + k * n + m * n);
}

} // namespace

const kind& gemm_kind() {
  static const kind instance{"gemm", "eat_gemm", "eat_gemm_reference",
    check_workload, dims, sizes, fill_inputs, call, call_reference,
    element_name, useful_flops, compulsory_bytes};
  return instance;
}

} // namespace eat::devices
