// HIP side of devices/gpu_runner/device_fill.hpp.

#include "devices/gpu_runner/device_fill.hpp"

#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include "devices/gpu_runner/device_fill_kernel.hpp"

namespace eat::devices {

int launch_uniform_fill(void* data, dtype t, size_t count, float lo,
  float scale, uint64_t seed, void* stream) {
  if (!launch_fill_kernel(data, t, count, lo, scale, seed,
        static_cast<hipStream_t>(stream)))
    return -1;
  return static_cast<int>(hipGetLastError());
}

} // namespace eat::devices
