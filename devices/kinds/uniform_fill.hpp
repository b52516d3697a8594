// Fast uniform fills of typed buffers: the harness draws every freely
// drawn floating input of every rotating set anew at each block of timed
// rounds (docs/harness.md, "Timing phase"), tens of MiB at a time, where
// the per-element generator of the first draw (rng and store_from_double)
// writes 2.6 GB/s of float32 and 0.85 GB/s of bfloat16 on the
// development VM.
//
// Each element is a hash of its index and the seed (counter-based, so the
// loop vectorises: 8.0 GB/s of float32, 3.3 GB/s of bfloat16 with AVX2),
// and the GPU runners run the same hash in a kernel of their own
// (devices/gpu_runner/device_fill.hpp). The inline helpers below compile
// for the host and, under nvcc or hipcc, for the device.
// Pure functions; any thread.

#pragma once

#include <cstddef>
#include <cstdint>

#include "devices/kinds/dtype.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#  define EAT_HOST_DEVICE __host__ __device__
#else
#  define EAT_HOST_DEVICE
#endif

namespace eat::devices {

/// A 32-bit integer hash with low bias (Wellons' "lowbias32").
EAT_HOST_DEVICE inline uint32_t uniform_hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/// The bits of element `i`'s float in [1, 2) under the seed's halves `s0`
/// and `s1`: 23 random bits as its mantissa. The index is taken modulo
/// 2^32 (buffers of more than 4 G elements repeat).
EAT_HOST_DEVICE inline uint32_t uniform_bits(
  size_t i, uint32_t s0, uint32_t s1) {
  auto h = uniform_hash(uniform_hash(static_cast<uint32_t>(i) ^ s0) + s1);
  return (h >> 9) | 0x3f800000u;
}

/// The bfloat16 bits of the finite float whose bits are `bits`, rounded to
/// nearest even.
EAT_HOST_DEVICE inline uint16_t uniform_bfloat16(uint32_t bits) {
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// Overwrites the `count` elements of type `t` at `data` with values
/// uniform in [`lo`, `hi`) drawn from `seed`: 23 random bits a value,
/// rounded to nearest even for the narrow floats (which may so reach
/// `hi`), the floor for integers.
void fill_uniform(
  dtype t, void* data, size_t count, double lo, double hi, uint64_t seed);

} // namespace eat::devices
