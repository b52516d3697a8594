// What a runner keeps from a kernel in a process of its own (devices/
// runner/kernel_host.hpp), which shares the buffers' memory with it: keys
// drawn from the operating system that never leave the runner's memory, a
// keyed hash by which it sees whether buffers were written that the
// kernel must not write, the encryption in place of the baseline's
// timed outputs, which the candidate could otherwise find and copy (the
// baseline goes first on half the sets of a block), and the random
// numbers of the timing phase, which no kernel can predict from what it
// sees (secret_rng). Also used by the GPU runners, whose kernels' device
// code sees only the device's memory.

#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devices/kinds/problem.hpp"

namespace eat::devices {

/// An AES-128 key.
using secret_key = std::array<unsigned char, 16>;

/// A key from the operating system's random source; throws
/// std::runtime_error if none can be drawn.
secret_key random_secret_key();

/// A keyed hash of `size` bytes: the first 64 bits of their AES-128-GMAC
/// tag under `key`. Without the key, bytes cannot be changed so that it
/// stays the same (unlike hash_buffers', checks.hpp). Throws
/// std::runtime_error if OpenSSL fails.
uint64_t keyed_hash(const secret_key& key, const void* data, size_t size);

/// keyed_hash over the bytes of `buffers`, one after the other.
uint64_t keyed_hash(
  const secret_key& key, const std::vector<typed_buffer>& buffers);

/// Encrypts or decrypts (the same operation) the `bytes` at `data` in place
/// with AES-128-CTR under `key`, with a counter block that starts from
/// (`address`, `generation`): a buffer's address and its contents'
/// generation, so that no two maskings of a run share keystream. Returns
/// why it failed, or "".
std::string mask_bytes(const secret_key& key, uint64_t address,
  uint32_t generation, void* data, size_t bytes);

/// Random numbers drawn from the operating system's generator
/// (getrandom), 64 at a time: no output says anything of the next. The
/// timing phase's choices come from it: each round's seed for drawing the
/// inputs anew, which kernel goes first, and (GPU) which elements a round
/// compares. They came from an rng seeded from the evaluation's seed, whose
/// splitmix64 state any one output gives away: a red-team sgemm recovered
/// a redraw's seed from the 23 random bits of each input float (a
/// vectorised search of 2^32 in 4 - 7 s, inside one call), inverted the
/// generator, predicted every later round's inputs, computed the outputs
/// in its untimed calls and copied them in the timed ones: passed 5.3x for
/// the naive loop, the same with another seed. Not thread-safe.
class secret_rng {
public:
  /// Returns the next 64 random bits; throws std::runtime_error if the
  /// operating system has none to give.
  uint64_t next();

  /// Returns a uniform index in [0, n); n must be positive.
  uint64_t below(uint64_t n);

private:
  std::array<uint64_t, 64> pool_{};
  size_t used_ = pool_.size();
};

} // namespace eat::devices
