// Checking a TOML document against a fixed schema with precise messages: the
// problems found in one file, each with its line:column, and typed access to
// the keys of one table that records every bad or unknown key. Internal to
// the eat_config library (runtime/config.cpp, runtime/task_file.cpp); the
// messages it produces are described in docs/config.md. Objects are used by
// one thread at a time.

#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <toml++/toml.h>

#include "actors/protocol/error.hpp"
#include "actors/protocol/file_read.hpp"

namespace eat::toml_check {

/// `text` in double quotes, with quotes, backslashes and control characters
/// escaped.
std::string quote(std::string_view text);

/// The shortest decimal form of `x` that reads back as `x`.
std::string format_number(double x);

/// Describes a value for "got ...": integers bare, other values with their
/// type, e.g. `string "abc"`, `float 1.5`, `an array`.
std::string describe(const toml::node& node);

/// Joins `xs` with `sep`.
std::string join(const std::vector<std::string>& xs, std::string_view sep);

using eat::file_contents;

/// Reads a whole regular file of at most `max_bytes` bytes
/// (read_regular_file).
file_contents read_file(const std::filesystem::path& file, size_t max_bytes);

/// Parses `text`; a syntax error becomes `code` with the message
/// "<file>:<line>:<column>: TOML syntax error: <toml++'s description>".
caf::expected<toml::table> parse(
  std::string_view text, const std::filesystem::path& file, error code);

/// The problems found in one file, each with its position when known, so
/// that all of them are reported together and in file order.
class problems {
public:
  explicit problems(std::string file);

  /// Records `what` at `where` (a region without a line counts as unknown).
  void add(const toml::source_region& where, std::string what);

  bool empty() const {
    return issues_.empty();
  }

  /// Number of problems recorded so far.
  size_t size() const {
    return issues_.size();
  }

  /// One error of `code` whose text has one line per problem,
  /// "<file>:<line>:<column>: <what>" (or "<file>: <what>"), in file order.
  caf::error to_error(error code);

private:
  struct issue {
    uint32_t line;
    uint32_t column;
    std::string what;
  };
  std::string file_;
  std::vector<issue> issues_;
};

/// A constraint on a number (integers are accepted where floats are).
struct number_rule {
  const char* expected;
  bool (*ok)(double);
};

/// A constraint on a string.
struct string_rule {
  const char* expected;
  bool (*ok)(std::string_view);
};

/// Expectation text for an integer in [lo, hi], e.g. "an integer in [1, 64]"
/// or "a non-negative integer" when `hi` is the largest TOML integer.
std::string expect_integer(uint64_t lo, uint64_t hi);

/// The largest TOML integer.
constexpr uint64_t max_integer = INT64_MAX;

/// Typed access to the keys of one table. Keys are named in messages by
/// their full path, e.g. "run.seed" or "workloads[1].axes". A bad value is
/// recorded and read as absent, so that defaults stay and reading goes on.
class table_reader {
public:
  /// Checks that `table` (null when absent) holds only `keys`; `label` names
  /// the table in the unknown-key message, e.g. "[run]" (may be empty).
  table_reader(const toml::table* table, std::string path, std::string label,
    std::vector<std::string_view> keys, problems& out);

  /// True when `key` is present.
  bool has(std::string_view key) const;

  /// The value of `key`, or null.
  const toml::node* get(std::string_view key) const;

  /// The full name of `key`, e.g. "run.seed".
  std::string full(std::string_view key) const;

  /// Position of `key` (unknown when absent).
  toml::source_region where(std::string_view key) const;

  /// Records "<full key>: <what>" at the key.
  void fail(std::string_view key, std::string what);

  /// Records "<full key>: expected <expected>, got <got>" at the key.
  void fail(
    std::string_view key, std::string_view expected, const std::string& got);

  /// Records "<full key>: required key is missing" (at the table, unless it
  /// is the document root) unless `key` is present; returns whether it is.
  bool require(std::string_view key);

  std::optional<uint64_t> integer(
    std::string_view key, uint64_t lo, uint64_t hi);

  std::optional<double> number(std::string_view key, number_rule rule);

  /// A boolean (recording any other type as "expected a boolean").
  std::optional<bool> boolean(std::string_view key);

  std::optional<std::string> string(std::string_view key, string_rule rule);

  /// An array of integers in [lo, hi].
  std::optional<std::vector<uint64_t>> integers(
    std::string_view key, uint64_t lo, uint64_t hi);

  /// An array of strings that satisfy `rule`.
  std::optional<std::vector<std::string>> strings(
    std::string_view key, string_rule rule);

  /// A table (recording a wrong type).
  const toml::table* table(std::string_view key);

  /// An array of tables (recording a wrong type or a non-table element).
  const toml::array* tables(std::string_view key);

private:
  const toml::table* table_;
  std::string path_;
  problems& out_;
};

} // namespace eat::toml_check
