#include "runtime/config_override.hpp"

#include <sstream>
#include <vector>

#include <toml++/toml.h>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in{std::string{text}};
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

/// `line` without leading blanks.
std::string_view trimmed(std::string_view line) {
  auto first = line.find_first_not_of(" \t");
  return first == std::string_view::npos ? std::string_view{}
                                         : line.substr(first);
}

/// Whether `line` is `key = ...` (a bare key, as a [run] table writes it).
bool sets_key(std::string_view line, const std::string& key) {
  line = trimmed(line);
  if (line.substr(0, key.size()) != key)
    return false;
  return trimmed(line.substr(key.size())).substr(0, 1) == "=";
}

/// Whether `line` is the header `[run]` (a comment may follow).
bool is_run_header(std::string_view line) {
  line = trimmed(line);
  if (line.substr(0, 1) != "[")
    return false;
  line = trimmed(line.substr(1));
  if (line.substr(0, 3) != "run")
    return false;
  line = trimmed(line.substr(3));
  if (line.substr(0, 1) != "]")
    return false;
  line = trimmed(line.substr(1));
  return line.empty() || line[0] == '#';
}

/// `root` with `values` set in its run table, written out by toml++: for a
/// [run] that no line-wise edit can change (an inline table, dotted keys),
/// at the cost of the file's comments and layout.
caf::expected<std::string> rewritten(
  toml::table root, const std::map<std::string, std::string>& values) {
  if (!root.contains("run"))
    root.insert("run", toml::table{});
  auto* run = root["run"].as_table();
  if (run == nullptr)
    return make_error(
      error::invalid_config, "cannot override keys: run is not a table");
  run->is_inline(false);
  for (const auto& [key, value] : values) {
    try {
      auto parsed = toml::parse("x = " + value);
      run->insert_or_assign(key, *parsed.get("x"));
    } catch (const toml::parse_error& err) {
      return make_error(error::invalid_config,
        "cannot override " + key + ": " + std::string{err.description()});
    }
  }
  std::ostringstream out;
  out << root << "\n";
  return out.str();
}

} // namespace

caf::expected<std::string>
with_run_keys(std::string_view text,
              const std::map<std::string, std::string>& values) {
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error& err) {
    return make_error(error::invalid_config,
                      std::string{"cannot override keys: "}
                        + std::string{err.description()});
  }
  auto lines = split_lines(text);
  const auto* run = root["run"].as_table();
  if (run != nullptr && run->is_inline())
    return rewritten(root, values);
  std::map<std::string, std::string> missing;
  for (const auto& [key, value] : values) {
    const toml::node* node = run != nullptr ? run->get(key) : nullptr;
    auto line = node != nullptr ? node->source().begin.line : 0;
    if (line == 0 || line > lines.size()) {
      missing[key] = value;
      continue;
    }
    // `run.seed = 3` at the top, `"seed" = 3`: not a line to replace.
    if (!sets_key(lines[line - 1], key))
      return rewritten(root, values);
    lines[line - 1] = key + " = " + value;
  }
  if (!missing.empty()) {
    std::vector<std::string> added;
    for (const auto& [key, value] : missing)
      added.push_back(key + " = " + value);
    auto header = run != nullptr ? run->source().begin.line : 0;
    if (run == nullptr) {
      lines.push_back("[run]");
      lines.insert(lines.end(), added.begin(), added.end());
    } else if (header == 0 || header > lines.size()
               || !is_run_header(lines[header - 1])) {
      return rewritten(root, values); // [run] made of dotted keys
    } else {
      lines.insert(lines.begin() + static_cast<long>(header), added.begin(),
                   added.end());
    }
  }
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

} // namespace eat
