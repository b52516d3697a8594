#include "actors/agent/render.hpp"

#include <algorithm>
#include <cctype>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool is_identifier(std::string_view x) {
  return !x.empty() && !std::isdigit(static_cast<unsigned char>(x[0]))
         && std::all_of(x.begin(), x.end(), is_word_char);
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

caf::error template_error(const template_family& family, std::string what) {
  return make_error(error::invalid_task,
                    "template '" + family.name + "': " + std::move(what));
}

/// Checks that `params` gives every parameter of `family` a value from its
/// space, and nothing else.
caf::error check_params(const template_family& family,
                        const param_map& params) {
  std::vector<std::string> names;
  for (const auto& space : family.params) {
    names.push_back(space.name);
    auto i = params.find(space.name);
    if (i == params.end())
      return template_error(family,
                            "parameter '" + space.name + "' has no value");
    const auto& xs = space.values;
    if (std::find(xs.begin(), xs.end(), i->second) == xs.end())
      return template_error(family, space.name + " = \"" + i->second
                                      + "\" is not one of " + join(xs));
  }
  for (const auto& [name, value] : params)
    if (std::find(names.begin(), names.end(), name) == names.end())
      return template_error(family, "no parameter '" + name
                                      + "' (parameters: " + join(names) + ")");
  return {};
}

} // namespace

std::vector<placeholder> find_placeholders(std::string_view source) {
  std::vector<placeholder> result;
  size_t line = 1;
  size_t counted = 0; // bytes of `source` whose newlines are in `line`
  for (auto open = source.find("{{"); open != std::string_view::npos;
       open = source.find("{{", open + 1)) {
    auto end = open + 2;
    while (end < source.size() && is_word_char(source[end]))
      ++end;
    auto name = source.substr(open + 2, end - open - 2);
    if (!is_identifier(name) || source.substr(end, 2) != "}}")
      continue;
    line += std::count(source.begin() + counted, source.begin() + open, '\n');
    counted = open;
    result.push_back({std::string{name}, open, line});
    open = end + 1;
  }
  return result;
}

caf::expected<std::string> render_template(const template_family& family,
                                           const param_map& params) {
  if (auto err = check_params(family, params))
    return err;
  std::string out;
  size_t done = 0;
  for (const auto& x : find_placeholders(family.source)) {
    auto i = params.find(x.name);
    if (i == params.end())
      return template_error(family, "placeholder {{" + x.name + "}} on line "
                                      + std::to_string(x.line)
                                      + " names no parameter");
    out.append(family.source, done, x.offset - done);
    out += i->second;
    done = x.offset + x.name.size() + 4;
  }
  out.append(family.source, done, std::string::npos);
  return out;
}

} // namespace eat
