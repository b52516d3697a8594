#include "persistence/learning.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

using team_lookup = std::function<std::string(const std::string&)>;

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isspace(c) != 0;
  });
}

caf::error bad_entry(
  const learning_entry& e, size_t position, const std::string& what) {
  auto name = is_blank(e.id) ? "#" + std::to_string(position) : e.id;
  return make_error(
    error::invalid_arguments, "learning entry " + name + " " + what);
}

/// Returns the entry that superseded `id` among `entries`, or nullptr.
const learning_entry* superseder(
  const std::vector<learning_entry>& entries, const std::string& id) {
  for (const auto& x : entries)
    if (x.supersedes == id)
      return &x;
  return nullptr;
}

caf::expected<void> check_supersedes(const learning_entry& e, size_t position,
  const std::vector<learning_entry>& earlier) {
  auto same_id = [&](const learning_entry& x) {
    return x.id == e.supersedes;
  };
  if (std::none_of(earlier.begin(), earlier.end(), same_id))
    return bad_entry(e, position,
      "supersedes " + e.supersedes + ", which is not an earlier entry");
  if (auto by = superseder(earlier, e.supersedes))
    return bad_entry(e, position,
      "supersedes " + e.supersedes + ", which " + by->id
        + " superseded already");
  return caf::unit;
}

// -- markdown ----------------------------------------------------------------

/// Escapes the characters that markdown reads as markup inside a line (ids
/// and names are never at the start of a line, so `#`, `-`, `+` stay).
std::string escape_markdown(std::string_view s) {
  static constexpr std::string_view special = "\\`*_[]<>";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

/// Percent-encodes everything but RFC 3986's unreserved characters, so that
/// `s` is one path segment.
std::string encode_segment(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0x0f];
    }
  }
  return out;
}

/// The anchor that markdown renderers give the heading `id`.
std::string anchor(std::string_view id) {
  std::string out;
  for (unsigned char c : id) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_')
      out += static_cast<char>(std::tolower(c));
    else if (c == ' ')
      out += '-';
  }
  return out;
}

std::string entry_link(const std::string& id) {
  return "[" + escape_markdown(id) + "](#" + anchor(id) + ")";
}

std::string evidence_link(const std::string& cid, const team_lookup& team_of) {
  auto team = team_of(cid);
  if (team.empty())
    return escape_markdown(cid) + " (team unknown)";
  return "[" + escape_markdown(cid) + "](/teams/" + encode_segment(team)
         + "/candidates/" + encode_segment(cid) + "/result.md)";
}

std::string author_line(const learning_entry& e) {
  auto out = "Author: " + to_string(e.author);
  if (!e.author_name.empty())
    out += " " + escape_markdown(e.author_name);
  return out + ".";
}

std::string evidence_line(const learning_entry& e, const team_lookup& team_of) {
  if (e.evidence.empty())
    return "Evidence: none.";
  std::string out = "Evidence: ";
  for (size_t i = 0; i < e.evidence.size(); ++i)
    out += (i == 0 ? "" : ", ") + evidence_link(e.evidence[i], team_of);
  return out + ".";
}

/// Renders one entry as a level-3 section; `replaced_by` is empty for a
/// current lesson.
std::string render_entry(const learning_entry& e,
  const std::string& replaced_by, const team_lookup& team_of) {
  auto text = e.text;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.pop_back();
  std::string out = "### " + escape_markdown(e.id) + "\n\n" + text + "\n\n";
  out += author_line(e) + " " + evidence_line(e, team_of);
  if (!e.supersedes.empty())
    out += " Replaces " + entry_link(e.supersedes) + ".";
  if (!replaced_by.empty())
    out += " Replaced by " + entry_link(replaced_by) + ".";
  return out + "\n\n";
}

/// Maps each superseded id to the id of the first entry after it that
/// supersedes it.
std::map<std::string, std::string> replacements(
  const std::vector<learning_entry>& entries) {
  std::map<std::string, std::string> result;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& old = entries[i].supersedes;
    if (old.empty() || result.count(old) > 0)
      continue;
    auto earlier
      = std::any_of(entries.begin(), entries.begin() + i, [&](const auto& x) {
          return x.id == old;
        });
    if (earlier)
      result.emplace(old, entries[i].id);
  }
  return result;
}

} // namespace

std::string to_string(learning_author x) {
  switch (x) {
    case learning_author::supervisor: return "supervisor";
    case learning_author::team: return "team";
    case learning_author::agent: return "agent";
    case learning_author::operator_: return "operator";
  }
  return "unknown";
}

caf::expected<void> check_learning(
  const learning_entry& e, const std::vector<learning_entry>& earlier) {
  auto position = earlier.size() + 1;
  if (is_blank(e.id))
    return bad_entry(e, position, "has an empty id");
  if (is_blank(e.text))
    return bad_entry(e, position, "has an empty text");
  for (const auto& x : earlier)
    if (x.id == e.id)
      return bad_entry(e, position, "reuses the id of an earlier entry");
  for (size_t i = 0; i < e.evidence.size(); ++i)
    if (is_blank(e.evidence[i]))
      return bad_entry(e, position,
        "has an empty evidence id (evidence " + std::to_string(i + 1) + ")");
  if (!e.supersedes.empty())
    return check_supersedes(e, position, earlier);
  return caf::unit;
}

std::string render_learning(
  const std::vector<learning_entry>& entries, const team_lookup& team_of) {
  auto replaced = replacements(entries);
  std::string current;
  std::string superseded;
  for (const auto& e : entries) {
    if (auto i = replaced.find(e.id); i != replaced.end())
      superseded += render_entry(e, i->second, team_of);
    else
      current += render_entry(e, "", team_of);
  }
  std::string out = "# Learning document\n\n"
                    "Lessons of this run, oldest first, each with the "
                    "evaluations that support it.\n\n"
                    "## Lessons\n\n";
  out += current.empty() ? std::string{"None yet.\n\n"} : current;
  if (!superseded.empty())
    out += "## Superseded\n\n" + superseded;
  out.pop_back(); // one newline at the end
  return out;
}

} // namespace eat
