// The GPU side of fill_uniform (devices/kinds/uniform_fill.hpp): a kernel
// that draws each element of a device buffer from the same hash of its
// index and the seed, so that the GPU runners draw a set's inputs anew
// every round without copying from the host. Defined by
// devices/cuda/cuda_fill.cu in the CUDA runner and devices/hip/
// hip_fill.hip in the HIP runner; each runner links one. No CUDA or HIP
// header here.

#pragma once

#include <cstddef>
#include <cstdint>

#include "devices/kinds/dtype.hpp"

namespace eat::devices {

/// Launches, on `stream`, the fill of the `count` elements of floating
/// type `t` (float32, float16 or bfloat16) at device address `data` with
/// values `lo` + `scale` x u, u uniform in [0, 1) from `seed`. Returns the
/// runtime's error code of the launch (0: launched), or -1 for a type it
/// does not fill.
int launch_uniform_fill(void* data, dtype t, size_t count, float lo,
  float scale, uint64_t seed, void* stream);

} // namespace eat::devices
