// Encoding and decoding of described structs as MessagePack bytes.
// Decoding never throws: a malformed input becomes error::malformed_message
// naming the expected type.

#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>
#include <msgpack.hpp>

#include "actors/protocol/describe.hpp"
#include "actors/protocol/error.hpp"

namespace eat::wire {

/// Returns the MessagePack encoding of `x`.
template <class T>
std::string encode(const T& x) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, x);
  return std::string{buf.data(), buf.size()};
}

/// Decodes a `T` from exactly the bytes in `bytes`.
template <class T>
caf::expected<T> decode(std::string_view bytes) {
  const char* what = "value";
  if constexpr (is_described_v<T>)
    what = describe_name(static_cast<const T*>(nullptr));
  try {
    size_t offset = 0;
    auto handle = msgpack::unpack(bytes.data(), bytes.size(), offset);
    if (offset != bytes.size())
      return make_error(error::malformed_message,
                        std::string{"trailing bytes after "} + what);
    T result;
    handle.get().convert(result);
    return result;
  } catch (const std::exception& ex) {
    return make_error(error::malformed_message,
                      std::string{"cannot decode "} + what + ": " + ex.what());
  }
}

} // namespace eat::wire
