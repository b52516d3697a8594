// The GPU entry ABI of each harness kind that GPU tasks may use. Layouts,
// input drawing, the reference (CPU, fp64), tolerances and element names
// come from the CPU side's generic path (devices/kinds/problem.hpp); only
// the entry point differs: it takes device pointers and the harness's
// stream, and returns a runtime error code (docs/harness.md, "CUDA and HIP
// backends").
//
//   gemm:        extern "C" int eat_gemm(const float* a, const float* b,
//                                        float* c, int64_t m, int64_t n,
//                                        int64_t k, void* stream);
//   definition:  extern "C" int eat_kernel(const void* const* inputs,
//                                          void* const* outputs,
//                                          const int64_t* axes,
//                                          void* stream);
//
// Pointers are device pointers owned by the harness (definition tasks:
// inputs and outputs in the order of definition.json, axes in the order of
// its `axes`, as on the CPU). The kernel must enqueue its work on `stream`
// (a cudaStream_t or hipStream_t) or the legacy default stream, and return
// 0 or the cudaError_t / hipError_t of what failed. It may return before
// the work is done: the harness synchronises the whole device.
//
// Immutable values with static storage; any thread.

#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "actors/protocol/task.hpp"

namespace eat::devices {

/// Calls a GPU entry point found with dlsym on device buffers: `inputs`
/// and `outputs` in ABI order, `axes` the problem's dimensions.
using gpu_entry_call = int (*)(void* fn, const void* const* inputs,
  void* const* outputs, const int64_t* axes, void* stream);

/// The GPU side of one harness kind.
struct gpu_kind {
  /// The kind's name, e.g. "gemm".
  const char* name;
  /// Symbol of the candidate and baseline entry point.
  const char* entry;
  gpu_entry_call call;
};

/// Returns the GPU side of kind `name`, or nullptr if GPU tasks cannot use
/// that kind.
const gpu_kind* find_gpu_kind(std::string_view name);

/// Returns why a GPU device cannot evaluate `task` (a kind without a GPU
/// entry ABI, or anything devices::check_task finds other than the backend),
/// or "" if it can.
std::string check_gpu_task(const task_spec& task);

} // namespace eat::devices
