// Kind "definition": a FlashInfer-Bench definition (docs/tasks.md) whose
// workloads the task loader resolved into numbers: axes in ABI order, typed
// inputs and outputs with their generators and tolerances, and the FLOPs and
// bytes of one call. Entry points (destination passing, docs/harness.md):
//
//   extern "C" void eat_kernel(const void* const* inputs,
//                              void* const* outputs, const int64_t* axes);
//   extern "C" void eat_kernel_reference(const void* const* inputs,
//                                        double* const* outputs,
//                                        const int64_t* axes);
//
// This file checks a resolved workload; devices/kinds/problem.cpp draws,
// calls and names. The kind has no fp32 members.

#include <cmath>

#include "devices/kind.hpp"
#include "devices/kinds/dtype.hpp"
#include "devices/kinds/tolerance.hpp"

namespace eat::devices {

namespace {

/// Largest element count of one buffer.
constexpr int64_t max_elements = int64_t{1} << 34;

/// Returns the elements of `shape`, or -1 if a dimension is negative or the
/// product exceeds max_elements.
int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) {
    if (d < 0 || (d > 0 && n > max_elements / d))
      return -1;
    n *= d;
  }
  return n;
}

std::string check_generator(const tensor_arg& a, dtype t, int64_t n) {
  if (a.generator == "random")
    return is_floating(t) ? ""
                          : "is " + a.dtype
                              + ": integer inputs need a generator "
                                "(indptr, permutation or uniform)";
  if (a.generator == "uniform")
    return a.low < a.high && std::isfinite(a.low) && std::isfinite(a.high)
             ? ""
             : "uniform needs finite low < high";
  if (a.generator != "indptr" && a.generator != "permutation")
    return "unknown generator '" + a.generator
           + "' (random, uniform, indptr or permutation)";
  if (is_floating(t))
    return a.generator + " needs an int32 or int64 input, not " + a.dtype;
  if (a.shape.size() != 1)
    return a.generator + " needs a one-dimensional input";
  if (a.extent < 0 || (t == dtype::int32 && a.extent > INT32_MAX))
    return a.generator + " bound " + std::to_string(a.extent) + " does not fit "
           + a.dtype;
  if (a.generator == "indptr")
    return n >= 1 && (n > 1 || a.extent == 0)
             ? ""
             : "indptr needs at least one element (and a total of 0 when it "
               "has exactly one)";
  return n <= a.extent
           ? ""
           : "permutation of " + std::to_string(n)
               + " distinct ids needs a range of at least " + std::to_string(n)
               + ", got " + std::to_string(a.extent);
}

std::string check_arg(const tensor_arg& a, bool output) {
  auto prefix = std::string{output ? "output '" : "input '"} + a.name + "' ";
  auto t = parse_dtype(a.dtype);
  if (!t)
    return prefix + "has dtype '" + a.dtype + "' (this harness knows "
           + dtype_names() + ")";
  auto n = element_count(a.shape);
  if (n < 0)
    return prefix + "has a negative dimension or more than 2^34 elements";
  if (output) {
    if (auto why = check_tolerance(tolerance_of(a)); !why.empty())
      return prefix + "has invalid tolerances: " + why;
    return {};
  }
  if (a.scalar)
    return std::isfinite(a.value) ? "" : prefix + "has a non-finite value";
  if (auto why = check_generator(a, *t, n); !why.empty())
    return prefix + why;
  return {};
}

std::string check_workload(const workload& w) {
  if (w.outputs.empty())
    return "no outputs (a definition workload is resolved by the task "
           "loader: load it from a task folder)";
  for (const auto& a : w.inputs)
    if (auto why = check_arg(a, false); !why.empty())
      return why;
  for (const auto& a : w.outputs)
    if (auto why = check_arg(a, true); !why.empty())
      return why;
  if (!(w.flops >= 0) || !(w.bytes >= 0))
    return "negative FLOPs or bytes per call";
  return {};
}

problem_dims dims(const workload& w) {
  problem_dims result{w.abi_axes};
  result.flops = w.flops;
  result.bytes = w.bytes;
  return result;
}

double useful_flops(const problem_dims& d) {
  return d.flops;
}

double compulsory_bytes(const problem_dims& d) {
  return d.bytes;
}

} // namespace

const kind& definition_kind() {
  static const kind instance{"definition", "eat_kernel", "eat_kernel_reference",
    check_workload, dims, nullptr, nullptr, nullptr, nullptr, nullptr,
    useful_flops, compulsory_bytes};
  return instance;
}

} // namespace eat::devices
