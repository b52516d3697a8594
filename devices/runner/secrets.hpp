// What a runner keeps from a kernel in a process of its own (devices/
// runner/kernel_host.hpp), which shares the buffers' memory with it: keys
// drawn from the operating system that never leave the runner's memory, a
// keyed hash by which it sees whether buffers were written that the
// kernel must not write, and the encryption in place of the baseline's
// timed outputs, which the candidate could otherwise find and copy (the
// baseline goes first on half the sets of a block).

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

} // namespace eat::devices
