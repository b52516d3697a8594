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
    return make_error(error::invalid_config,
                      "cannot override keys of an inline [run] table");
  std::map<std::string, std::string> missing;
  for (const auto& [key, value] : values) {
    const toml::node* node = run != nullptr ? run->get(key) : nullptr;
    auto line = node != nullptr ? node->source().begin.line : 0;
    if (line == 0 || line > lines.size()) {
      missing[key] = value;
      continue;
    }
    lines[line - 1] = key + " = " + value;
  }
  if (!missing.empty()) {
    std::vector<std::string> added;
    for (const auto& [key, value] : missing)
      added.push_back(key + " = " + value);
    auto header = run != nullptr ? run->source().begin.line : 0;
    if (header == 0 || header > lines.size()) {
      lines.push_back("[run]");
      lines.insert(lines.end(), added.begin(), added.end());
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
