#include "actors/agent/reply_edits.hpp"

#include <vector>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

/// One line of a reply without its '\n', and where it starts.
struct line {
  std::string_view text;
  size_t offset = 0;
};

std::vector<line> split_lines(std::string_view text) {
  std::vector<line> result;
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    auto x = text.substr(start, end - start);
    if (!x.empty() && x.back() == '\r')
      x.remove_suffix(1);
    result.push_back({x, start});
    start = end + 1;
  }
  return result;
}

std::string_view trim(std::string_view x) {
  auto first = x.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  auto last = x.find_last_not_of(" \t");
  return x.substr(first, last - first + 1);
}

/// Number of backticks a fence line opens with (0 when it is no fence).
size_t fence_width(std::string_view x) {
  x = trim(x);
  size_t n = 0;
  while (n < x.size() && x[n] == '`')
    ++n;
  return n >= 3 ? n : 0;
}

/// Whether `x` is `count` (5 to 9) copies of `c`, then `word` if not empty.
bool is_marker(std::string_view x, char c, std::string_view word) {
  x = trim(x);
  size_t n = 0;
  while (n < x.size() && x[n] == c)
    ++n;
  if (n < 5 || n > 9)
    return false;
  return word.empty() ? n == x.size() : trim(x.substr(n)) == word;
}

bool is_search(std::string_view x) {
  return is_marker(x, '<', "SEARCH");
}

/// One parsed SEARCH/REPLACE block.
struct edit {
  std::string search;
  std::string replace;
};

/// Joins lines [first, last) with a '\n' after each.
std::string join_lines(
  const std::vector<line>& lines, size_t first, size_t last) {
  std::string out;
  for (auto i = first; i < last; ++i)
    (out += lines[i].text) += '\n';
  return out;
}

caf::expected<std::vector<edit>> parse_edits(std::string_view text) {
  auto lines = split_lines(text);
  std::vector<edit> result;
  size_t i = 0;
  while (i < lines.size()) {
    if (!is_search(lines[i++].text))
      continue;
    auto block = std::to_string(result.size() + 1);
    auto divider = i;
    while (divider < lines.size() && !is_marker(lines[divider].text, '=', ""))
      ++divider;
    auto end = divider;
    while (end < lines.size() && !is_marker(lines[end].text, '>', "REPLACE"))
      ++end;
    if (end >= lines.size())
      return make_error(
        error::agent_failed, "SEARCH/REPLACE block " + block
                               + " is not terminated (no ======= and "
                                 ">>>>>>> REPLACE lines)");
    result.push_back(
      {join_lines(lines, i, divider), join_lines(lines, divider + 1, end)});
    i = end + 1;
  }
  return result;
}

size_t count_occurrences(const std::string& haystack, const std::string& x) {
  size_t n = 0;
  for (auto pos = haystack.find(x); pos != std::string::npos;
       pos = haystack.find(x, pos + 1))
    ++n;
  return n;
}

} // namespace

std::optional<std::string> last_fenced_block(std::string_view text) {
  auto lines = split_lines(text);
  std::optional<std::string> result;
  size_t i = 0;
  while (i < lines.size()) {
    auto width = fence_width(lines[i++].text);
    if (width == 0)
      continue;
    auto end = i;
    while (end < lines.size()
           && !(fence_width(lines[end].text) >= width
                && trim(lines[end].text).find_first_not_of('`')
                     == std::string_view::npos))
      ++end;
    if (end >= lines.size())
      break; // an unterminated fence (a truncated reply) gives no block
    result = join_lines(lines, i, end);
    i = end + 1;
  }
  return result;
}

caf::expected<std::string> apply_search_replace(
  const std::string& parent, std::string_view text) {
  auto edits = parse_edits(text);
  if (!edits)
    return edits.error();
  if (edits->empty())
    return make_error(error::agent_failed, "no SEARCH/REPLACE blocks in reply");
  // Blocks hold whole lines: compare against a parent that ends with '\n'.
  bool added_newline = !parent.empty() && parent.back() != '\n';
  auto result = added_newline ? parent + '\n' : parent;
  for (size_t i = 0; i < edits->size(); ++i) {
    const auto& [search, replace] = (*edits)[i];
    auto block = "SEARCH/REPLACE block " + std::to_string(i + 1);
    if (search.empty()) {
      if (!result.empty())
        return make_error(
          error::agent_failed, block + " has an empty SEARCH section");
      result = replace;
      continue;
    }
    auto n = count_occurrences(result, search);
    if (n != 1)
      return make_error(error::agent_failed,
        block + ": SEARCH text "
          + (n == 0 ? std::string{"not found"}
                    : "found " + std::to_string(n) + " times")
          + " in the parent (it must match exactly once): "
          + search.substr(0, 200));
    result.replace(result.find(search), search.size(), replace);
  }
  if (added_newline && !result.empty() && result.back() == '\n')
    result.pop_back();
  return result;
}

caf::expected<std::string> kernel_from_reply(
  const std::string& parent, std::string_view reply) {
  for (const auto& l : split_lines(reply))
    if (is_search(l.text))
      return apply_search_replace(parent, reply);
  auto block = last_fenced_block(reply);
  if (!block)
    return make_error(error::agent_failed, "no kernel in reply");
  if (trim(*block).find_first_not_of("\n\r\t ") == std::string_view::npos)
    return make_error(
      error::agent_failed, "no kernel in reply (the last code block is empty)");
  return std::move(*block);
}

} // namespace eat
