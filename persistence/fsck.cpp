#include "persistence/fsck.hpp"

#include <optional>

#include "actors/protocol/error.hpp"

#include "persistence/event_log.hpp"
#include "persistence/file_tree.hpp"
#include "persistence/run_history.hpp"
#include "persistence/views.hpp"

namespace eat::persistence {

namespace {

/// Checks the log; returns the rebuilt history when it fits together.
std::optional<run_history> check_log(store& s, fsck_report& out) {
  event_log log{s};
  auto events = log.read(1);
  if (!events) {
    out.problems.push_back("log: " + render(events.error()));
    return std::nullopt;
  }
  out.events = events->size();
  for (size_t i = 0; i < events->size(); ++i)
    if ((*events)[i].seq != i + 1) {
      out.problems.push_back("log: expected event " + std::to_string(i + 1)
                             + ", found " + std::to_string((*events)[i].seq)
                             + " (a gap)");
      return std::nullopt;
    }
  auto h = rebuild(*events);
  if (!h) {
    out.problems.push_back("log: " + render(h.error()));
    return std::nullopt;
  }
  return std::move(*h);
}

void check_views(const store& s, const run_history& h, fsck_report& out) {
  auto stored = read_views(s);
  if (!stored) {
    out.problems.push_back("views: " + render(stored.error()));
    return;
  }
  out.views = stored->size();
  auto expected = all_views(h);
  for (const auto& [key, value] : expected) {
    auto i = stored->find(key);
    if (i == stored->end())
      out.problems.push_back("view '" + key + "' is missing");
    else if (i->second != value)
      out.problems.push_back("view '" + key
                             + "' differs from a rebuild of the log");
  }
  for (const auto& [key, value] : *stored)
    if (expected.count(key) == 0)
      out.problems.push_back("view '" + key
                             + "' has no counterpart in the log");
}

void check_files(store& s, fsck_report& out) {
  file_tree files{s};
  auto all = files.all();
  if (!all) {
    out.problems.push_back("files: " + render(all.error()));
    return;
  }
  out.files = all->size();
  auto problems = files.verify();
  if (!problems) {
    out.problems.push_back("files: " + render(problems.error()));
    return;
  }
  for (auto& p : *problems)
    out.problems.push_back("files: " + std::move(p));
}

} // namespace

caf::expected<fsck_report> fsck(store& s) {
  fsck_report out;
  if (auto h = check_log(s, out))
    check_views(s, *h, out);
  check_files(s, out);
  return out;
}

} // namespace eat::persistence
