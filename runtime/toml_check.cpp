#include "runtime/toml_check.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace eat::toml_check {

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string format_number(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string{buf, res.ptr};
}

std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: {
      // A message shows at most the first 200 characters of a value (a
      // 900,000-character name was echoed whole).
      const auto& text = node.as_string()->get();
      if (text.size() <= 200)
        return "string " + quote(text);
      return "string " + quote(std::string_view{text}.substr(0, 200)) + "... ("
             + std::to_string(text.size()) + " characters)";
    }
    case toml::node_type::integer:
      return std::to_string(node.as_integer()->get());
    case toml::node_type::floating_point:
      return "float " + format_number(node.as_floating_point()->get());
    case toml::node_type::boolean:
      return node.as_boolean()->get() ? "boolean true" : "boolean false";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date or time";
  }
}

std::string join(const std::vector<std::string>& xs, std::string_view sep) {
  std::string out;
  for (const auto& x : xs) {
    if (!out.empty())
      out += sep;
    out += x;
  }
  return out;
}

file_contents read_file(const std::filesystem::path& file, size_t max_bytes) {
  return read_regular_file(file, max_bytes);
}

caf::expected<toml::table> parse(
  std::string_view text, const std::filesystem::path& file, error code) {
  try {
    return toml::parse(text, std::string_view{file.native()});
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    return make_error(
      code, file.string() + ":" + std::to_string(at.line) + ":"
              + std::to_string(at.column)
              + ": TOML syntax error: " + std::string{e.description()});
  }
}

// -- problems ----------------------------------------------------------------

problems::problems(std::string file) : file_(std::move(file)) {
  // nop
}

void problems::add(const toml::source_region& where, std::string what) {
  issues_.push_back({where.begin.line, where.begin.column, std::move(what)});
}

caf::error problems::to_error(error code) {
  auto order = [](const issue& x) {
    return std::pair{x.line == 0 ? UINT32_MAX : x.line, x.column};
  };
  std::stable_sort(
    issues_.begin(), issues_.end(), [&](const issue& x, const issue& y) {
      return order(x) < order(y);
    });
  std::string text;
  for (const auto& x : issues_) {
    if (!text.empty())
      text += '\n';
    text += file_;
    if (x.line > 0)
      text += ":" + std::to_string(x.line) + ":" + std::to_string(x.column);
    text += ": " + x.what;
  }
  return make_error(code, std::move(text));
}

// -- table_reader ------------------------------------------------------------

std::string expect_integer(uint64_t lo, uint64_t hi) {
  if (hi == max_integer)
    return lo == 0 ? "a non-negative integer"
                   : "an integer >= " + std::to_string(lo);
  return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi)
         + "]";
}

namespace {

/// The integer in `node` if it lies in [lo, hi].
std::optional<uint64_t> integer_in(
  const toml::node& node, uint64_t lo, uint64_t hi) {
  auto* i = node.as_integer();
  if (!i || i->get() < 0)
    return std::nullopt;
  auto x = static_cast<uint64_t>(i->get());
  if (x < lo || x > hi)
    return std::nullopt;
  return x;
}

} // namespace

table_reader::table_reader(const toml::table* table, std::string path,
  std::string label, std::vector<std::string_view> keys, problems& out)
  : table_(table), path_(std::move(path)), out_(out) {
  if (!table_)
    return;
  std::vector<std::string> names{keys.begin(), keys.end()};
  auto in = label.empty() ? std::string{} : " in " + label;
  for (auto&& [key, node] : *table_)
    if (std::find(keys.begin(), keys.end(), key.str()) == keys.end())
      out_.add(key.source(), "unknown key '" + full(key.str()) + "' (known keys"
                               + in + ": " + join(names, ", ") + ")");
}

bool table_reader::has(std::string_view key) const {
  return get(key) != nullptr;
}

const toml::node* table_reader::get(std::string_view key) const {
  return table_ ? table_->get(key) : nullptr;
}

std::string table_reader::full(std::string_view key) const {
  return path_.empty() ? std::string{key} : path_ + "." + std::string{key};
}

toml::source_region table_reader::where(std::string_view key) const {
  if (!table_)
    return {};
  auto i = table_->find(key);
  return i != table_->end() ? i->first.source() : toml::source_region{};
}

void table_reader::fail(std::string_view key, std::string what) {
  out_.add(where(key), full(key) + ": " + std::move(what));
}

void table_reader::fail(
  std::string_view key, std::string_view expected, const std::string& got) {
  fail(key, "expected " + std::string{expected} + ", got " + got);
}

bool table_reader::require(std::string_view key) {
  if (has(key))
    return true;
  // Point at the table that lacks the key, unless it is the whole document.
  auto at = table_ && !path_.empty() ? table_->source() : toml::source_region{};
  out_.add(at, full(key) + ": required key is missing");
  return false;
}

std::optional<uint64_t> table_reader::integer(
  std::string_view key, uint64_t lo, uint64_t hi) {
  auto* node = get(key);
  if (!node)
    return std::nullopt;
  auto x = integer_in(*node, lo, hi);
  if (!x)
    fail(key, expect_integer(lo, hi), describe(*node));
  return x;
}

std::optional<double> table_reader::number(
  std::string_view key, number_rule rule) {
  auto* node = get(key);
  if (!node)
    return std::nullopt;
  std::optional<double> x;
  if (auto* i = node->as_integer())
    x = static_cast<double>(i->get());
  else if (auto* f = node->as_floating_point())
    x = f->get();
  if (!x || !std::isfinite(*x) || !rule.ok(*x)) {
    fail(key, rule.expected, describe(*node));
    return std::nullopt;
  }
  return x;
}

std::optional<bool> table_reader::boolean(std::string_view key) {
  auto* node = get(key);
  if (!node)
    return std::nullopt;
  if (auto* b = node->as_boolean())
    return b->get();
  fail(key, "a boolean", describe(*node));
  return std::nullopt;
}

std::optional<std::string> table_reader::string(
  std::string_view key, string_rule rule) {
  auto* node = get(key);
  if (!node)
    return std::nullopt;
  auto* s = node->as_string();
  if (!s || !rule.ok(s->get())) {
    fail(key, rule.expected, describe(*node));
    return std::nullopt;
  }
  return s->get();
}

std::optional<std::vector<uint64_t>> table_reader::integers(
  std::string_view key, uint64_t lo, uint64_t hi) {
  auto* node = get(key);
  if (!node)
    return std::nullopt;
  auto expected = expect_integer(lo, hi);
  auto* xs = node->as_array();
  if (!xs) {
    fail(key, "an array of " + expected, describe(*node));
    return std::nullopt;
  }
  std::vector<uint64_t> result;
  for (size_t i = 0; i < xs->size(); ++i) {
    const auto& x = *xs->get(i);
    auto value = integer_in(x, lo, hi);
    if (!value) {
      out_.add(x.source(), full(key) + "[" + std::to_string(i) + "]: expected "
                             + expected + ", got " + describe(x));
      return std::nullopt;
    }
    result.push_back(*value);
  }
  return result;
}

std::optional<std::vector<std::string>> table_reader::strings(
  std::string_view key, string_rule rule) {
  auto* node = get(key);
  if (!node)
    return std::nullopt;
  auto* xs = node->as_array();
  if (!xs) {
    fail(key, std::string{"an array of "} + rule.expected, describe(*node));
    return std::nullopt;
  }
  std::vector<std::string> result;
  for (size_t i = 0; i < xs->size(); ++i) {
    const auto& x = *xs->get(i);
    auto* s = x.as_string();
    if (!s || !rule.ok(s->get())) {
      out_.add(x.source(), full(key) + "[" + std::to_string(i) + "]: expected "
                             + rule.expected + ", got " + describe(x));
      return std::nullopt;
    }
    result.push_back(s->get());
  }
  return result;
}

const toml::table* table_reader::table(std::string_view key) {
  auto* node = get(key);
  if (node && !node->is_table())
    fail(key, "a table", describe(*node));
  return node ? node->as_table() : nullptr;
}

const toml::array* table_reader::tables(std::string_view key) {
  auto* node = get(key);
  if (!node)
    return nullptr;
  auto* xs = node->as_array();
  if (!xs) {
    fail(key, "an array of tables", describe(*node));
    return nullptr;
  }
  for (size_t i = 0; i < xs->size(); ++i)
    if (!xs->get(i)->is_table()) {
      out_.add(xs->get(i)->source(), full(key) + "[" + std::to_string(i)
                                       + "]: expected a table, got "
                                       + describe(*xs->get(i)));
      return nullptr;
    }
  return xs;
}

} // namespace eat::toml_check
