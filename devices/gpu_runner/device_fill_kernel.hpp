// The kernel of devices/gpu_runner/device_fill.hpp, written once for nvcc
// and hipcc (both take the same names and launch syntax); included only by
// devices/cuda/cuda_fill.cu and devices/hip/hip_fill.hip, after their
// runtime's headers (cuda_fp16.h or hip/hip_fp16.h for __half).

#pragma once

#include <cstddef>
#include <cstdint>

#include "devices/kinds/uniform_fill.hpp"

namespace eat::devices {

/// Threads a block, and blocks at most (a grid-stride loop covers the rest).
constexpr int fill_threads = 256;
constexpr size_t max_fill_blocks = 65536;

__global__ void uniform_fill_kernel(void* data, dtype t, size_t count, float lo,
  float scale, uint32_t s0, uint32_t s1) {
  auto stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    // Rounded as the host rounds it (devices/kinds/uniform_fill.cpp): a
    // product, then a sum, never contracted into one fused multiply-add.
    // nvcc keeps __fmul_rn and __fadd_rn apart; HIP's are the plain
    // operators, which hipcc contracts unless compiled with
    // -ffp-contract=off (its default, fast, ignores pragmas), as
    // devices/CMakeLists.txt compiles the runners' HIP sources.
    float u = __uint_as_float(uniform_bits(i, s0, s1)) - 1.0f;
    float v = __fadd_rn(lo, __fmul_rn(scale, u));
    switch (t) {
      case dtype::float32: static_cast<float*>(data)[i] = v; break;
      case dtype::float16:
        static_cast<__half*>(data)[i] = __float2half_rn(v);
        break;
      default:
        static_cast<uint16_t*>(data)[i] = uniform_bfloat16(__float_as_uint(v));
        break;
    }
  }
}

/// Launches uniform_fill_kernel on `stream` for a floating `t`; false for
/// another type (nothing launched).
template<class Stream>
bool launch_fill_kernel(void* data, dtype t, size_t count, float lo,
  float scale, uint64_t seed, Stream stream) {
  if (t != dtype::float32 && t != dtype::float16 && t != dtype::bfloat16)
    return false;
  if (count == 0)
    return true;
  auto blocks = (count + fill_threads - 1) / fill_threads;
  if (blocks > max_fill_blocks)
    blocks = max_fill_blocks;
  uniform_fill_kernel<<<static_cast<unsigned>(blocks), fill_threads, 0,
    stream>>>(data, t, count, lo, scale, static_cast<uint32_t>(seed),
    static_cast<uint32_t>(seed >> 32));
  return true;
}

} // namespace eat::devices
