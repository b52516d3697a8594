// A small deterministic random number generator (splitmix64) used wherever
// the devices need reproducible randomness: input generation in the runner,
// sample ordering, and bootstrap resampling. Unlike <random>'s distributions,
// its output is the same on every platform and standard library.
// Plain value: each user owns its own generator; not shared between threads.

#pragma once

#include <cstdint>

namespace eat::devices {

/// Mixes `x` into a well-distributed 64-bit value (splitmix64's finaliser).
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Derives an independent seed from `seed` and a stream number.
constexpr uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  return mix64(mix64(seed) ^ mix64(stream + 0x632be59bd9b4e019ull));
}

/// Deterministic splitmix64 generator.
class rng {
public:
  explicit rng(uint64_t seed) : state_(seed) {
    // nop
  }

  /// Returns the next 64 random bits.
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Returns a uniform double in [0, 1).
  double uniform() {
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

  /// Returns a uniform double in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * uniform();
  }

  /// Returns a uniform index in [0, n); n must be positive.
  uint64_t below(uint64_t n) {
    // Lemire's multiply-shift; the bias is below 2^-32 for our sizes.
    return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(next()) * n) >> 64);
  }

private:
  uint64_t state_;
};

} // namespace eat::devices
