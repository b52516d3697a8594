// The GPU entry ABI of each harness kind that GPU tasks may use. Inputs,
// reference, sizes and element names come from the CPU kind of the same
// name (devices/kind.hpp); only the entry point differs: it takes device
// pointers and the harness's stream, and returns a runtime error code.
//
//   gemm:  extern "C" int eat_gemm(const float* a, const float* b, float* c,
//                                  int64_t m, int64_t n, int64_t k,
//                                  void* stream);
//
// `a`, `b`, `c` are device pointers owned by the harness; the kernel must
// enqueue its work on `stream` (a cudaStream_t or hipStream_t) or the
// legacy default stream, and return 0 or the cudaError_t / hipError_t of
// what failed. It may return before the work is done: the harness
// synchronises the whole device. Immutable values; any thread.

#pragma once

#include <cstdint>
#include <string_view>

namespace eat::devices {

/// Calls a GPU entry point found with dlsym on device buffers.
using gpu_entry_call = int (*)(void* fn, const float* const* inputs,
  float* output, const int64_t* dims, void* stream);

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

} // namespace eat::devices
