#include "persistence/fs_path.hpp"

#include "actors/protocol/error.hpp"
#include "persistence/keys.hpp"

namespace eat::persistence {

namespace {

caf::error bad_path(std::string_view p, std::string_view why) {
  return make_error(error::invalid_arguments,
    "path " + quote_fs_path(p) + " " + std::string{why});
}

/// Calls `fn(component)` for each slash-separated part of `p` (after its
/// leading slash, if any); stops at the first error `fn` returns.
template<class F>
caf::expected<void> for_each_component(std::string_view p, F&& fn) {
  size_t begin = !p.empty() && p.front() == '/' ? 1 : 0;
  while (begin <= p.size()) {
    auto end = p.find('/', begin);
    if (end == std::string_view::npos)
      end = p.size();
    if (auto ok = fn(p.substr(begin, end - begin)); !ok)
      return ok;
    begin = end + 1;
  }
  return caf::unit;
}

/// The rules on single bytes: no control characters, no backslash.
caf::expected<void> check_bytes(std::string_view p) {
  for (char c : p) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f)
      return bad_path(p, "contains a control character: NUL and bytes "
                         "0x01-0x1f, 0x7f are not allowed");
    if (c == '\\')
      return bad_path(p, "contains a backslash: components are separated by "
                         "'/' only");
  }
  return caf::unit;
}

/// The rule that keeps paths inside the namespace: no ".." component.
caf::expected<void> check_no_dot_dot(std::string_view p) {
  return for_each_component(p, [&](std::string_view c) -> caf::expected<void> {
    if (c == "..")
      return bad_path(p, "leaves the namespace: '..' is not allowed");
    return caf::unit;
  });
}

/// The rules on the components of `p`, which starts with '/' and has no
/// trailing slash (unless it is "/").
caf::expected<void> check_components(
  std::string_view original, std::string_view p) {
  return for_each_component(p, [&](std::string_view c) -> caf::expected<void> {
    if (c.empty())
      return bad_path(original, "has an empty component ('//')");
    if (c == ".")
      return bad_path(original, "has a '.' component: not allowed");
    if (c.size() > max_fs_component)
      return bad_path(original,
        "has a component of " + std::to_string(c.size()) + " bytes: at most "
          + std::to_string(max_fs_component) + " are allowed");
    return caf::unit;
  });
}

} // namespace

std::string quote_fs_path(std::string_view p) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "'";
  for (char c : p) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) {
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 0x0f];
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

caf::expected<std::string> normalize_fs_path(std::string_view p) {
  if (p.empty())
    return bad_path(p, "is empty: namespace paths start with '/'");
  if (p.size() > max_fs_path)
    return bad_path(p.substr(0, 64),
      "... is too long: " + std::to_string(p.size()) + " bytes, at most "
        + std::to_string(max_fs_path) + " are allowed");
  if (auto ok = check_bytes(p); !ok)
    return ok.error();
  if (auto ok = check_no_dot_dot(p); !ok)
    return ok.error();
  if (p.front() != '/')
    return bad_path(p, "is not absolute: namespace paths start with '/'");
  if (p == "/")
    return std::string{p};
  // "//" becomes "/", which check_components reports as an empty component.
  auto trimmed = p.back() == '/' ? p.substr(0, p.size() - 1) : p;
  if (auto ok = check_components(p, trimmed); !ok)
    return ok.error();
  return std::string{trimmed};
}

std::string file_key_prefix(std::string_view path) {
  std::string key{path};
  key += '\0';
  return key;
}

std::string encode_file_key(std::string_view path, uint64_t version) {
  return file_key_prefix(path) + encode_seq_key(version);
}

std::optional<file_key> decode_file_key(std::string_view key) {
  if (key.size() < seq_key_size + 2)
    return std::nullopt;
  auto nul = key.size() - seq_key_size - 1;
  if (key[nul] != '\0')
    return std::nullopt;
  auto version = decode_seq_key(key.substr(nul + 1));
  if (!version)
    return std::nullopt;
  return file_key{key.substr(0, nul), *version};
}

} // namespace eat::persistence
