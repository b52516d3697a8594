// One workload's call as the generic harness sees it, whatever the kind:
// typed input and output buffers (dtype and element count), how inputs are
// drawn, how entry points are called, and how output elements are named in
// messages (docs/harness.md). fp32 kinds are adapted here (float32 buffers,
// one output); definition workloads come with everything resolved.
//
// Built and used by the runner's only thread; plain values.

#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/protocol/task.hpp"
#include "devices/kind.hpp"
#include "devices/kinds/dtype.hpp"
#include "devices/kinds/tolerance.hpp"
#include "devices/page_allocator.hpp"
#include "devices/rng.hpp"

namespace eat::devices {

/// `size()` elements of one dtype, 16-byte aligned, zero-initialised.
class typed_buffer {
public:
  typed_buffer() = default;

  typed_buffer(dtype type, size_t count)
    : type_(type), count_(count), storage_(count * size_of(type)) {
    std::fill(storage_.begin(), storage_.end(), std::byte{0});
  }

  dtype type() const {
    return type_;
  }

  size_t size() const {
    return count_;
  }

  size_t bytes() const {
    return storage_.size();
  }

  void* data() {
    return storage_.data();
  }

  const void* data() const {
    return storage_.data();
  }

  /// Element `i` as a double.
  double get(size_t i) const {
    return load_as_double(type_, data(), i);
  }

  /// Stores `x` as element `i` (rounded to the dtype).
  void set(size_t i, double x) {
    store_from_double(type_, data(), i, x);
  }

private:
  dtype type_ = dtype::float32;
  size_t count_ = 0;
  /// Page-aligned from a page up: inputs start at one offset in a page.
  page_vector<std::byte> storage_;
};

/// Calls entry point `fn` of kind `k` as problem::call does, on
/// `input_count` inputs and the dimensions `dims` (problem_dims::data()):
/// what a kernel's own process runs (devices/runner/kernel_host.hpp).
void call_entry(const kind& k, void* fn, const void* const* inputs,
  size_t input_count, void* const* outputs, const int64_t* dims);

/// One input or output buffer of a call.
struct tensor_layout {
  std::string name;
  dtype type = dtype::float32;
  size_t elements = 0;
  /// Extents, for element names; empty for a scalar or a 0-D tensor.
  std::vector<int64_t> shape;
  /// Outputs: the comparison's tolerance.
  tolerance tol;
};

/// One workload's call.
class problem {
public:
  /// The problem of `w` for kind `k` (check_task passed); fp32 kinds take
  /// the task's tolerance `tol`.
  static problem make(const kind& k, const workload& w, const tolerance& tol);

  const problem_dims& dims() const {
    return dims_;
  }

  /// The kind's name, e.g. "gemm".
  const char* kind_name() const {
    return kind_->name;
  }

  const std::vector<tensor_layout>& inputs() const {
    return inputs_;
  }

  const std::vector<tensor_layout>& outputs() const {
    return outputs_;
  }

  /// Bytes of all inputs plus twice all outputs: one timing input set.
  uint64_t set_bytes() const;

  /// Draws the inputs of one case from `seed`, in new buffers.
  std::vector<typed_buffer> make_inputs(input_style style, uint64_t seed) const;

  /// Draws the same inputs into `inputs` (as make_inputs allocates them:
  /// one buffer per input, of its dtype and size), overwriting every
  /// element and keeping the buffers' addresses: the harness reuses its
  /// buffers case after case instead of faulting in new pages (a 238 MB
  /// input took 0.65 s to first touch on a VM).
  void fill_inputs(
    input_style style, uint64_t seed, std::vector<typed_buffer>& inputs) const;

  /// Draws every element of each freely drawn floating input anew from
  /// `seed`, from the range of the first draw (fill_uniform); scalars and
  /// structured or integer inputs keep their contents. The timing phases
  /// do this before every use of a set, so that a kernel that keeps a
  /// set's inputs and outputs from call to call finds nothing to reuse.
  void redraw(std::vector<typed_buffer>& inputs, uint64_t seed) const;

  /// The range redraw draws input `input` from, [first, second), or nothing
  /// when it keeps the input (a scalar, an integer or structured input).
  std::optional<std::pair<double, double>> redraw_range(size_t input) const;

  /// The seed redraw fills input `input` from, given its `seed`.
  static uint64_t redraw_seed(uint64_t seed, size_t input) {
    return derive_seed(seed, input);
  }

  /// Calls a candidate or baseline entry point.
  void call(void* fn, const void* const* inputs, void* const* outputs) const;

  /// Calls the reference entry point (outputs in double).
  void call_reference(
    void* fn, const void* const* inputs, double* const* outputs) const;

  /// Names element `index` of output `output`, e.g. "output[3][7][100]".
  std::string element_name(size_t output, size_t index) const;

private:
  const kind* kind_ = nullptr;
  problem_dims dims_;
  std::vector<tensor_layout> inputs_;
  std::vector<tensor_layout> outputs_;
  /// Definition workloads: the resolved inputs (generators, scalars).
  std::vector<tensor_arg> args_;
};

/// Names element `index` of a tensor called `name` of extents `shape`:
/// "name[i][j]..." in row-major order, or "name" for a scalar.
std::string element_name(
  const std::string& name, const std::vector<int64_t>& shape, size_t index);

} // namespace eat::devices
