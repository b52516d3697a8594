#include "actors/protocol/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <system_error>

#include "actors/protocol/error.hpp"

namespace eat::wire {

namespace {

/// The length of the UTF-8 sequence at the front of `s` and whether it is
/// valid; an invalid one is its maximal subpart (Unicode 15, section 3.9),
/// at least one byte.
struct utf8_step {
  size_t length;
  bool valid;
};

utf8_step next_utf8(std::string_view s) {
  auto lead = static_cast<unsigned char>(s[0]);
  if (lead < 0x80)
    return {1, true};
  size_t need = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF)
    need = 1;
  else if (lead >= 0xE0 && lead <= 0xEF)
    need = 2;
  else if (lead >= 0xF0 && lead <= 0xF4)
    need = 3;
  else
    return {1, false};
  // Second bytes that would make overlong forms, surrogates or code points
  // above U+10FFFF are invalid.
  if (lead == 0xE0)
    lo = 0xA0;
  else if (lead == 0xED)
    hi = 0x9F;
  else if (lead == 0xF0)
    lo = 0x90;
  else if (lead == 0xF4)
    hi = 0x8F;
  for (size_t i = 1; i <= need; ++i) {
    if (i >= s.size())
      return {i, false};
    auto c = static_cast<unsigned char>(s[i]);
    if (c < lo || c > hi)
      return {i, false};
    lo = 0x80;
    hi = 0xBF;
  }
  return {need + 1, true};
}

constexpr char upper_hex[] = "0123456789ABCDEF";
constexpr char lower_hex[] = "0123456789abcdef";

/// Builds the JSON text of one MessagePack object.
class json_writer {
public:
  void value(const msgpack::object& x) {
    switch (x.type) {
      case msgpack::type::NIL: out_ += "null"; break;
      case msgpack::type::BOOLEAN:
        out_ += x.via.boolean ? "true" : "false";
        break;
      case msgpack::type::POSITIVE_INTEGER: number(x.via.u64); break;
      case msgpack::type::NEGATIVE_INTEGER: number(x.via.i64); break;
      case msgpack::type::FLOAT32:
      case msgpack::type::FLOAT64: real(x.via.f64); break;
      case msgpack::type::STR: string({x.via.str.ptr, x.via.str.size}); break;
      case msgpack::type::BIN:
        hex_string({x.via.bin.ptr, x.via.bin.size});
        break;
      case msgpack::type::ARRAY: array(x.via.array); break;
      case msgpack::type::MAP: map(x.via.map); break;
      case msgpack::type::EXT: ext(x.via.ext); break;
    }
  }

  /// A JSON string with every byte of `s` escaped as needed.
  void string(std::string_view s) {
    out_ += '"';
    while (!s.empty()) {
      auto step = next_utf8(s);
      if (!step.valid)
        out_ += "\\uFFFD";
      else if (step.length == 1)
        ascii(s[0]);
      else
        out_.append(s.data(), step.length);
      s.remove_prefix(step.length);
    }
    out_ += '"';
  }

  std::string take() {
    return std::move(out_);
  }

private:
  template<class Int>
  void number(Int x) {
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof(buf), x);
    out_.append(buf, res.ptr);
  }

  void real(double x) {
    if (!std::isfinite(x)) {
      out_ += "null";
      return;
    }
    // Shortest text that reads back to the same double; locale-independent.
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof(buf), x);
    out_.append(buf, res.ptr);
  }

  void ascii(char c) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out_ += '\\';
      out_ += c;
    } else if (u < 0x20) {
      out_ += "\\u00";
      out_ += upper_hex[u >> 4];
      out_ += upper_hex[u & 0x0f];
    } else {
      out_ += c;
    }
  }

  void hex_string(std::string_view bytes) {
    out_ += '"';
    for (unsigned char b : bytes) {
      out_ += lower_hex[b >> 4];
      out_ += lower_hex[b & 0x0f];
    }
    out_ += '"';
  }

  void array(const msgpack::object_array& a) {
    out_ += '[';
    for (uint32_t i = 0; i < a.size; ++i) {
      if (i > 0)
        out_ += ',';
      value(a.ptr[i]);
    }
    out_ += ']';
  }

  void map(const msgpack::object_map& m) {
    out_ += '{';
    for (uint32_t i = 0; i < m.size; ++i) {
      if (i > 0)
        out_ += ',';
      key(m.ptr[i].key);
      out_ += ':';
      value(m.ptr[i].val);
    }
    out_ += '}';
  }

  /// Strings and bin are strings already; other keys become the string of
  /// their JSON text.
  void key(const msgpack::object& k) {
    if (k.type == msgpack::type::STR || k.type == msgpack::type::BIN) {
      value(k);
      return;
    }
    json_writer inner;
    inner.value(k);
    string(inner.take());
  }

  void ext(const msgpack::object_ext& e) {
    out_ += "{\"ext\":";
    number(static_cast<int64_t>(e.type()));
    out_ += ",\"hex\":";
    hex_string({e.data(), e.size});
    out_ += '}';
  }

  std::string out_;
};

/// Unpacks exactly one object from `bytes`; error texts begin with
/// `context`. Sizes are limited by the input's length (every element takes at
/// least one byte), so a forged length fails before anything is allocated
/// for it.
caf::expected<msgpack::object_handle> unpack_exactly(
  std::string_view bytes, const std::string& context) {
  auto n = bytes.size();
  msgpack::unpack_limit limit{n, n / 2, n, n, n, max_json_depth};
  try {
    size_t offset = 0;
    auto handle
      = msgpack::unpack(bytes.data(), n, offset, nullptr, nullptr, limit);
    if (offset != n)
      return make_error(error::malformed_message,
        context + "trailing bytes after MessagePack value: "
          + std::to_string(n - offset) + " of " + std::to_string(n));
    return handle;
  } catch (const std::exception& ex) {
    return make_error(error::malformed_message,
      context + "malformed MessagePack: " + ex.what());
  }
}

} // namespace

caf::expected<std::string> to_json(std::string_view msgpack_bytes) {
  auto handle = unpack_exactly(msgpack_bytes, "");
  if (!handle)
    return handle.error();
  json_writer w;
  w.value(handle->get());
  return w.take();
}

caf::expected<std::string> event_to_json(const event& e) {
  auto where
    = "event " + std::to_string(e.seq) + " (" + to_string(e.kind) + "): ";
  auto handle = unpack_exactly(e.body, where + "body: ");
  if (!handle)
    return handle.error();
  if (handle->get().type != msgpack::type::MAP)
    return make_error(
      error::malformed_message, where + "body is not a MessagePack map");
  json_writer w;
  w.value(handle->get());
  auto body = w.take();
  json_writer kind;
  kind.string(to_string(e.kind));
  return "{\"seq\":" + std::to_string(e.seq)
         + ",\"unix_ms\":" + std::to_string(e.unix_ms)
         + ",\"kind\":" + kind.take() + ",\"body\":" + body + "}";
}

} // namespace eat::wire
