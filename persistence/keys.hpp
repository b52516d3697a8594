// Key encodings of the store's databases (docs/store-layout.md).
//
// Sequence numbers are stored as 8-byte big-endian keys, so that LMDB's
// default byte-wise key order is numeric order and MDB_APPEND applies.
//
// Thread safety: stateless; usable from any thread.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eat::persistence {

/// Size of an encoded sequence-number key in bytes.
constexpr size_t seq_key_size = 8;

/// Returns the 8-byte big-endian encoding of `seq`.
inline std::string encode_seq_key(uint64_t seq) {
  std::string key(seq_key_size, '\0');
  for (size_t i = 0; i < seq_key_size; ++i)
    key[seq_key_size - 1 - i] = static_cast<char>((seq >> (8 * i)) & 0xff);
  return key;
}

/// Decodes a key written by encode_seq_key; nullopt when it is not 8 bytes.
inline std::optional<uint64_t> decode_seq_key(std::string_view key) {
  if (key.size() != seq_key_size)
    return std::nullopt;
  uint64_t seq = 0;
  for (char c : key)
    seq = (seq << 8) | static_cast<unsigned char>(c);
  return seq;
}

} // namespace eat::persistence
