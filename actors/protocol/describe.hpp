// One field list per message struct, from which both CAF's `inspect` and the
// MessagePack encoding are derived, so that the in-process schema and the wire
// schema cannot drift apart.
//
// Usage, in namespace eat (or a nested one), after the struct:
//
//   struct point { int32_t x = 0; int32_t y = 0; };
//   EAT_DESCRIBE(point, x, y)
//
// On the wire a described struct is a MessagePack map from field name to value
// (see docs/wire-format.md). Decoding ignores unknown keys (newer senders) and
// fails on a missing key, a value of the wrong type or an unknown enum code
// with eat::wire::decode_failure (a msgpack::type_error saying what and in
// which field), which callers turn into eat::error::malformed_message (see
// wire.hpp).
//
// A field added to a struct that event logs store is declared optional, so
// that logs written before it existed still decode (the field keeps its
// default):
//
//   EAT_DESCRIBE_OPTIONAL(point, z)
//
// Thread safety: stateless; usable from any thread.

#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include <caf/meta/type_name.hpp>
#include <msgpack.hpp>

namespace eat::wire {

/// One named field of a described struct `T`.
template <class T, class M>
struct field {
  std::string_view name;
  M T::*ptr;
};

template <class T, class M>
constexpr field<T, M> make_field(std::string_view name, M T::*ptr) {
  return {name, ptr};
}

/// True for types declared with EAT_DESCRIBE.
template <class T, class = void>
struct is_described : std::false_type {};

template <class T>
struct is_described<
  T, std::void_t<decltype(describe_fields(static_cast<const T*>(nullptr)))>>
  : std::true_type {};

template <class T>
constexpr bool is_described_v = is_described<T>::value;

/// True for described types with fields declared by EAT_DESCRIBE_OPTIONAL.
template<class T, class = void>
struct has_optional_fields : std::false_type {};

template<class T>
struct has_optional_fields<T,
  std::void_t<decltype(describe_optional(static_cast<const T*>(nullptr)))>>
  : std::true_type {};

/// Bit i set for each field i of `T` that a decoder must find.
template<class T>
uint32_t required_fields() {
  auto fs = describe_fields(static_cast<const T*>(nullptr));
  constexpr auto n = std::tuple_size_v<decltype(fs)>;
  uint32_t all = (n == 32) ? ~0u : ((1u << n) - 1);
  if constexpr (has_optional_fields<T>::value) {
    auto optional = describe_optional(static_cast<const T*>(nullptr));
    uint32_t index = 0;
    std::apply(
      [&](auto... f) {
        ((std::find(optional.begin(), optional.end(), f.name) != optional.end()
             ? (all &= ~(1u << index), ++index)
             : ++index),
          ...);
      },
      fs);
  }
  return all;
}

/// Why a value could not be decoded, with the path of fields to it, e.g.
/// "field 'kind': 99 is not a valid code". A msgpack::type_error,
/// so that code catching those catches it too.
class decode_failure : public msgpack::type_error {
public:
  explicit decode_failure(std::string what) : what_(std::move(what)) {
    // nop
  }

  const char* what() const noexcept override {
    return what_.c_str();
  }

private:
  std::string what_;
};

/// Enums cross the wire as their underlying integer. Each wire enum declares
/// `constexpr bool valid_enum_value(E, std::underlying_type_t<E>)` next to it
/// so that decoding can reject out-of-range codes.
template <class E>
void check_enum(E tag, std::underlying_type_t<E> raw) {
  if (!valid_enum_value(tag, raw))
    throw decode_failure(std::to_string(raw) + " is not a valid code");
}

/// What a MessagePack value is, for messages ("a string").
inline const char* msgpack_type_name(msgpack::type::object_type t) {
  switch (t) {
    case msgpack::type::NIL: return "nil";
    case msgpack::type::BOOLEAN: return "a boolean";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER: return "an integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "a float";
    case msgpack::type::STR: return "a string";
    case msgpack::type::BIN: return "bytes";
    case msgpack::type::ARRAY: return "an array";
    case msgpack::type::MAP: return "a map";
    default: return "an extension";
  }
}

/// Converts `value` into `out`, naming `field` in what fails.
template<class T>
void convert_field(
  const msgpack::object& value, T& out, std::string_view field) {
  auto where = "field '" + std::string{field} + "': ";
  try {
    value.convert(out);
  } catch (const decode_failure& e) {
    throw decode_failure(where + e.what());
  } catch (const msgpack::type_error&) {
    throw decode_failure(
      where + "wrong type: got " + msgpack_type_name(value.type));
  }
}

} // namespace eat::wire

// -- preprocessor for-each (up to 24 fields) ---------------------------------

#define EAT_PP_CAT_(a, b) a##b
#define EAT_PP_CAT(a, b) EAT_PP_CAT_(a, b)
#define EAT_PP_NARG(...)                                                       \
  EAT_PP_NARG_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13,    \
               12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define EAT_PP_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,  \
                     _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, N, \
                     ...)                                                      \
  N
#define EAT_PP_F1(m, T, x) m(T, x)
#define EAT_PP_F2(m, T, x, ...) m(T, x), EAT_PP_F1(m, T, __VA_ARGS__)
#define EAT_PP_F3(m, T, x, ...) m(T, x), EAT_PP_F2(m, T, __VA_ARGS__)
#define EAT_PP_F4(m, T, x, ...) m(T, x), EAT_PP_F3(m, T, __VA_ARGS__)
#define EAT_PP_F5(m, T, x, ...) m(T, x), EAT_PP_F4(m, T, __VA_ARGS__)
#define EAT_PP_F6(m, T, x, ...) m(T, x), EAT_PP_F5(m, T, __VA_ARGS__)
#define EAT_PP_F7(m, T, x, ...) m(T, x), EAT_PP_F6(m, T, __VA_ARGS__)
#define EAT_PP_F8(m, T, x, ...) m(T, x), EAT_PP_F7(m, T, __VA_ARGS__)
#define EAT_PP_F9(m, T, x, ...) m(T, x), EAT_PP_F8(m, T, __VA_ARGS__)
#define EAT_PP_F10(m, T, x, ...) m(T, x), EAT_PP_F9(m, T, __VA_ARGS__)
#define EAT_PP_F11(m, T, x, ...) m(T, x), EAT_PP_F10(m, T, __VA_ARGS__)
#define EAT_PP_F12(m, T, x, ...) m(T, x), EAT_PP_F11(m, T, __VA_ARGS__)
#define EAT_PP_F13(m, T, x, ...) m(T, x), EAT_PP_F12(m, T, __VA_ARGS__)
#define EAT_PP_F14(m, T, x, ...) m(T, x), EAT_PP_F13(m, T, __VA_ARGS__)
#define EAT_PP_F15(m, T, x, ...) m(T, x), EAT_PP_F14(m, T, __VA_ARGS__)
#define EAT_PP_F16(m, T, x, ...) m(T, x), EAT_PP_F15(m, T, __VA_ARGS__)
#define EAT_PP_F17(m, T, x, ...) m(T, x), EAT_PP_F16(m, T, __VA_ARGS__)
#define EAT_PP_F18(m, T, x, ...) m(T, x), EAT_PP_F17(m, T, __VA_ARGS__)
#define EAT_PP_F19(m, T, x, ...) m(T, x), EAT_PP_F18(m, T, __VA_ARGS__)
#define EAT_PP_F20(m, T, x, ...) m(T, x), EAT_PP_F19(m, T, __VA_ARGS__)
#define EAT_PP_F21(m, T, x, ...) m(T, x), EAT_PP_F20(m, T, __VA_ARGS__)
#define EAT_PP_F22(m, T, x, ...) m(T, x), EAT_PP_F21(m, T, __VA_ARGS__)
#define EAT_PP_F23(m, T, x, ...) m(T, x), EAT_PP_F22(m, T, __VA_ARGS__)
#define EAT_PP_F24(m, T, x, ...) m(T, x), EAT_PP_F23(m, T, __VA_ARGS__)
#define EAT_PP_FOR_EACH(m, T, ...)                                             \
  EAT_PP_CAT(EAT_PP_F, EAT_PP_NARG(__VA_ARGS__))(m, T, __VA_ARGS__)

#define EAT_PP_FIELD(T, x) ::eat::wire::make_field(#x, &T::x)

/// Declares the fields of struct `T`, in wire and inspection order.
#define EAT_DESCRIBE(T, ...)                                                   \
  [[maybe_unused]] inline auto describe_fields(const T*) {                     \
    return std::make_tuple(EAT_PP_FOR_EACH(EAT_PP_FIELD, T, __VA_ARGS__));     \
  }                                                                            \
  [[maybe_unused]] constexpr const char* describe_name(const T*) {             \
    return #T;                                                                 \
  }                                                                            \
  template <class Inspector>                                                   \
  typename Inspector::result_type inspect(Inspector& f, T& x) {                \
    return std::apply(                                                         \
      [&](auto... fs) {                                                        \
        return f(caf::meta::type_name(#T), (x.*(fs.ptr))...);                  \
      },                                                                       \
      describe_fields(&x));                                                    \
  }

#define EAT_PP_OPTIONAL_NAME(T, x)                                             \
  (static_cast<void>(sizeof(&T::x)), std::string_view{#x})

/// Declares fields of `T` (already listed by EAT_DESCRIBE) that decoding
/// may find missing: they keep their default values.
#define EAT_DESCRIBE_OPTIONAL(T, ...)                                          \
  [[maybe_unused]] inline auto describe_optional(const T*) {                   \
    return std::array<std::string_view, EAT_PP_NARG(__VA_ARGS__)>{             \
      EAT_PP_FOR_EACH(EAT_PP_OPTIONAL_NAME, T, __VA_ARGS__)};                  \
  }

/// Declares a wire enum `E` whose valid codes are [0, last].
#define EAT_WIRE_ENUM(E, last)                                                 \
  [[maybe_unused]] constexpr bool valid_enum_value(                            \
    E, std::underlying_type_t<E> raw) {                                        \
    return raw >= 0                                                            \
           && raw <= static_cast<std::underlying_type_t<E>>(E::last);          \
  }

// -- MessagePack adaptors ----------------------------------------------------

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  template <class E>
  struct pack<E, std::enable_if_t<std::is_enum_v<E>
                                  && std::is_same_v<decltype(valid_enum_value(
                                                      E{}, 0)),
                                                    bool>>> {
    template <class Stream>
    packer<Stream>& operator()(packer<Stream>& o, const E& v) const {
      o.pack(static_cast<int64_t>(v));
      return o;
    }
  };

  template <class E>
  struct convert<E, std::enable_if_t<std::is_enum_v<E>
                                     && std::is_same_v<decltype(valid_enum_value(
                                                         E{}, 0)),
                                                       bool>>> {
    const msgpack::object& operator()(const msgpack::object& o, E& v) const {
      auto raw = o.as<int64_t>();
      using U = std::underlying_type_t<E>;
      if (raw < 0 || raw > static_cast<int64_t>(std::numeric_limits<U>::max()))
        throw eat::wire::decode_failure(
          std::to_string(raw) + " is not a valid code");
      eat::wire::check_enum(E{}, static_cast<U>(raw));
      v = static_cast<E>(raw);
      return o;
    }
  };

  template <class T>
  struct pack<T, std::enable_if_t<eat::wire::is_described_v<T>>> {
    template <class Stream>
    packer<Stream>& operator()(packer<Stream>& o, const T& v) const {
      auto fs = describe_fields(static_cast<const T*>(nullptr));
      o.pack_map(static_cast<uint32_t>(std::tuple_size_v<decltype(fs)>));
      std::apply(
        [&](auto... f) {
          ((o.pack(f.name), o.pack(v.*(f.ptr))), ...);
        },
        fs);
      return o;
    }
  };

  template <class T>
  struct convert<T, std::enable_if_t<eat::wire::is_described_v<T>>> {
    const msgpack::object& operator()(const msgpack::object& o, T& v) const {
      if (o.type != msgpack::type::MAP)
        throw eat::wire::decode_failure(
          "expected a map, got "
          + std::string{eat::wire::msgpack_type_name(o.type)});
      auto fs = describe_fields(static_cast<const T*>(nullptr));
      constexpr auto n = std::tuple_size_v<decltype(fs)>;
      static_assert(n <= 32, "at most 32 fields per described struct");
      uint32_t seen = 0;
      for (uint32_t i = 0; i < o.via.map.size; ++i) {
        auto& kv = o.via.map.ptr[i];
        if (kv.key.type != msgpack::type::STR)
          throw eat::wire::decode_failure("a key that is not a string");
        std::string_view key{kv.key.via.str.ptr, kv.key.via.str.size};
        // Finds the field named `key` and stops there; unknown keys match
        // nothing and are ignored.
        std::apply(
          [&](auto... f) {
            uint32_t index = 0;
            static_cast<void>(((key == f.name ? (eat::wire::convert_field(
                                                   kv.val, v.*(f.ptr), f.name),
                                  seen |= (1u << index), true)
                                              : (++index, false))
                               || ...));
          },
          fs);
      }
      auto required = eat::wire::required_fields<T>();
      if ((seen & required) != required) {
        std::string missing;
        std::apply(
          [&](auto... f) {
            uint32_t index = 0;
            ((((required & ~seen) & (1u << index++)) != 0
                 ? static_cast<void>(missing += (missing.empty() ? "'" : ", '")
                                                + std::string{f.name} + "'")
                 : static_cast<void>(0)),
              ...);
          },
          fs);
        throw eat::wire::decode_failure("missing field(s) " + missing);
      }
      return o;
    }
  };

  } // namespace adaptor
} // MSGPACK_API_VERSION_NAMESPACE
} // namespace msgpack
