#include "runtime/printable.hpp"

namespace eat {

namespace {

/// Length of the valid UTF-8 sequence at the start of `s` that encodes no
/// control character (C1: U+0080 - U+009F), or 0.
size_t printable_sequence(std::string_view s) {
  auto b = [&](size_t i) {
    return static_cast<unsigned char>(s[i]);
  };
  size_t n = b(0) >= 0xf0 && b(0) <= 0xf4  ? 4
             : b(0) >= 0xe0                ? 3
             : b(0) >= 0xc2 && b(0) < 0xe0 ? 2
                                           : 0;
  if (n == 0 || s.size() < n)
    return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(i) & 0xc0) != 0x80)
      return 0;
  if (n == 2 && b(0) == 0xc2 && b(1) < 0xa0)
    return 0; // C1 control
  if ((n == 3 && b(0) == 0xe0 && b(1) < 0xa0)
      || (n == 3 && b(0) == 0xed && b(1) >= 0xa0)
      || (n == 4 && b(0) == 0xf0 && b(1) < 0x90)
      || (n == 4 && b(0) == 0xf4 && b(1) >= 0x90))
    return 0; // overlong, surrogate or beyond U+10FFFF
  return n;
}

} // namespace

std::string printable(std::string_view text, bool keep_lines) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  while (!text.empty()) {
    auto b = static_cast<unsigned char>(text[0]);
    size_t n
      = (b >= 0x20 && b < 0x7f) || (keep_lines && (b == '\n' || b == '\t'))
          ? 1
          : printable_sequence(text);
    if (n > 0) {
      out.append(text.substr(0, n));
    } else {
      n = 1;
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 0x0f];
    }
    text.remove_prefix(n);
  }
  return out;
}

printable_buffer::~printable_buffer() {
  sync();
}

printable_buffer::int_type printable_buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof()))
    return traits_type::not_eof(c);
  std::lock_guard lock{mutex_};
  line_ += traits_type::to_char_type(c);
  if (c == '\n')
    pass_on(false);
  return c;
}

std::streamsize printable_buffer::xsputn(const char* s, std::streamsize n) {
  std::lock_guard lock{mutex_};
  line_.append(s, static_cast<size_t>(n));
  pass_on(false);
  return n;
}

int printable_buffer::sync() {
  std::lock_guard lock{mutex_};
  pass_on(true);
  return target_->pubsync();
}

void printable_buffer::pass_on(bool partial) {
  auto end = line_.size();
  if (!partial) {
    auto newline = line_.rfind('\n');
    if (newline == std::string::npos)
      return;
    end = newline + 1;
  }
  if (end == 0)
    return;
  auto text = printable(std::string_view{line_}.substr(0, end), true);
  target_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
  line_.erase(0, end);
}

} // namespace eat
