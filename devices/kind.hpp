// A harness kind: what a task's `kind` field selects (docs/harness.md). The
// fp32 kinds (gemm, rmsnorm, softmax) fix a C ABI with float inputs and one
// float output, the buffers of a problem, how input values are drawn and how
// output elements are named in messages. The "definition" kind takes all of
// that from the workload, which the task loader resolved from a
// FlashInfer-Bench definition (docs/tasks.md); its fp32 members are null.
// The generic harness in devices/runner/ sees every kind through
// devices/kinds/problem.hpp (typed buffers, any number of outputs) and does
// everything else (poisoning, hashing, comparison, timing) the same way.
//
// Adding an fp32 kind is one new file in devices/kinds/ defining a `kind`
// value, plus its line in devices/kinds.cpp's table.
//
// Kinds are immutable values with static storage; use them from any thread.

#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "actors/protocol/task.hpp"
#include "devices/rng.hpp"

namespace eat::devices {

/// How input values of a check case are drawn.
enum class input_style {
  /// Uniform in [-1, 1): mixed signs, cancellation.
  random,
  /// Uniform in [-2, 14): non-zero mean and larger magnitude.
  offset_large,
};

/// A workload's numbers as a kind sees them: its axis values in ABI order,
/// plus, for the definition kind, the useful FLOPs and compulsory bytes per
/// call that the task's formulas gave. Reads like the vector of axes.
struct problem_dims {
  std::vector<int64_t> axes;
  double flops = 0;
  double bytes = 0;

  problem_dims() = default;

  problem_dims(std::vector<int64_t> xs) : axes(std::move(xs)) {
    // nop
  }

  problem_dims(std::initializer_list<int64_t> xs) : axes(xs) {
    // nop
  }

  int64_t operator[](size_t i) const {
    return axes[i];
  }

  const int64_t* data() const {
    return axes.data();
  }

  size_t size() const {
    return axes.size();
  }
};

/// Sizes, in elements, of one problem's buffers.
struct buffer_sizes {
  /// One entry per input, in ABI argument order.
  std::vector<size_t> inputs;
  size_t output = 0;
};

/// Calls an entry point found with dlsym on input buffers, writing `output`.
template<class Out>
using entry_call = void (*)(
  void* fn, const float* const* inputs, Out* output, const int64_t* dims);

/// One harness kind.
struct kind {
  /// The task kind it implements, e.g. "gemm".
  const char* name;
  /// Symbol of the candidate and baseline entry point, e.g. "eat_gemm".
  const char* entry;
  /// Symbol of the reference entry point (wider output type).
  const char* reference_entry;
  /// Returns why `w` does not fit this kind, or "" if it does.
  std::string (*check_workload)(const workload& w);
  /// The workload's dimensions in ABI order (check_workload must pass).
  problem_dims (*dims)(const workload& w);
  /// fp32 kinds: buffer sizes for the given dimensions (null for the
  /// definition kind, as are the next four members).
  buffer_sizes (*sizes)(const problem_dims& dims);
  /// fp32 kinds: draws the inputs of one case into `inputs` (buffers of
  /// `sizes(dims).inputs` elements, every element overwritten), so that
  /// the harness reuses its buffers instead of faulting in new pages.
  void (*fill_inputs)(const problem_dims& dims, input_style style,
    uint64_t seed, float* const* inputs);
  /// fp32 kinds: calls a candidate or baseline entry point.
  entry_call<float> call;
  /// fp32 kinds: calls the reference entry point.
  entry_call<double> call_reference;
  /// fp32 kinds: names output element `index` for messages, e.g. "C[3][7]".
  std::string (*element_name)(size_t index, const problem_dims& dims);
  /// Useful floating-point operations of one call (speed-of-light gate).
  double (*useful_flops)(const problem_dims& dims);
  /// Bytes one call must read and write at least (speed-of-light gate).
  double (*compulsory_bytes)(const problem_dims& dims);

  /// True for the kinds with float inputs and one float output.
  bool is_fp32() const {
    return fill_inputs != nullptr;
  }
};

/// Returns the kind called `name`, or nullptr.
const kind* find_kind(std::string_view name);

/// Returns the known kind names, comma-separated, for messages.
std::string kind_names();

/// Returns why the harness cannot evaluate `task` (unknown kind, unsupported
/// dtype, no workloads, a workload lacking an axis, negative tolerances, a
/// definition task for another backend than "cpu"), or "" if it can.
std::string check_task(const task_spec& task);

/// Draws one value in `style`.
float draw_value(input_style style, rng& gen);

/// Draws every element of `inputs` (buffers of the given sizes)
/// independently in `style` from a generator seeded with `seed`: the usual
/// fill_inputs.
void draw_inputs(const std::vector<size_t>& sizes, input_style style,
  uint64_t seed, float* const* inputs);

/// fp32 kind `k`'s inputs of one case in new buffers (tests, tools).
std::vector<std::vector<float>> make_inputs(
  const kind& k, const problem_dims& dims, input_style style, uint64_t seed);

} // namespace eat::devices
