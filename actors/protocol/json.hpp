// JSON renderings of MessagePack bytes and of described structs, for people
// and for tools without a MessagePack library (`eat fs cat`, exports, logs).
// JSON is an output only: nothing in eat parses it back. The mapping is
// described in docs/wire-format.md, "JSON".
//
// Thread safety: stateless; usable from any thread.

#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "actors/protocol/event.hpp"
#include "actors/protocol/wire.hpp"

namespace eat::wire {

/// Containers nested deeper than this are refused as malformed (a guard
/// against stack exhaustion; eat's own structs nest fewer than 10 levels).
constexpr size_t max_json_depth = 256;

/// Renders MessagePack bytes as JSON text on one line. Maps become objects
/// (keys that are not strings become the string of their JSON), arrays
/// arrays, str JSON strings (`"` and `\` escaped, control characters as
/// `\u00XX`, each maximal invalid UTF-8 sequence as `\uFFFD`), bin a string
/// of lowercase hex, ext an object `{"ext":type,"hex":"..."}`, integers
/// exact, floats in the shortest form that reads back to the same double,
/// NaN and infinities null, nil null, booleans true/false. Fails with
/// error::malformed_message on truncated or invalid input, trailing bytes,
/// or nesting deeper than max_json_depth.
caf::expected<std::string> to_json(std::string_view msgpack_bytes);

/// Renders the JSON of a described value (or any value MessagePack can
/// encode) via its wire encoding. A value nested deeper than max_json_depth
/// renders as `null`; described structs never are.
template<class T>
std::string to_json_value(const T& x) {
  auto json = to_json(encode(x));
  return json ? std::move(*json) : std::string{"null"};
}

/// Renders an event with its body decoded in place:
/// `{"seq":N,"unix_ms":N,"kind":"candidate_submitted","body":{...}}`. Fails
/// with error::malformed_message naming the seq when the body is not one
/// well-formed MessagePack map.
caf::expected<std::string> event_to_json(const event& e);

} // namespace eat::wire
