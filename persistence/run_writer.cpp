#include "persistence/run_writer.hpp"

#include "persistence/views.hpp"

namespace eat::persistence {

namespace {

/// The file /learning.md rendered from every lesson of `h`.
file_write learning_document(const run_history& h) {
  auto team_of = [&](const std::string& id) {
    auto c = h.candidates.find(id);
    return c == h.candidates.end() ? std::string{} : c->second.team;
  };
  return {"/learning.md", render_learning(h.learnings, team_of), "eat"};
}

/// Rewrites the view records of `s` that differ from a rebuild of `h`, such
/// as those an older eat wrote without a field added since.
caf::expected<void> refresh_views(store& s, const run_history& h) {
  auto stored = read_views(s);
  if (!stored)
    return stored.error();
  view_records stale;
  for (auto& [key, value] : all_views(h))
    if (auto i = stored->find(key); i == stored->end() || i->second != value)
      stale.emplace(key, std::move(value));
  if (stale.empty())
    return caf::unit;
  return s.update([&](txn& t) {
    return put_views(t, s, stale);
  });
}

} // namespace

caf::expected<std::unique_ptr<run_writer>> run_writer::open(store& s) {
  event_log log{s};
  auto events = log.read(1);
  if (!events)
    return events.error();
  auto h = rebuild(*events);
  if (!h)
    return h.error();
  if (auto ok = refresh_views(s, *h); !ok)
    return ok.error();
  return std::unique_ptr<run_writer>{new run_writer(s, std::move(*h))};
}

run_writer::run_writer(store& s, run_history h)
  : store_(s), log_(s), files_(s), history_(std::move(h)) {
  // nop
}

void run_writer::reload() {
  auto events = log_.read(1);
  if (!events)
    return;
  if (auto h = rebuild(*events))
    history_ = std::move(*h);
}

caf::expected<std::vector<uint64_t>>
run_writer::commit(std::vector<event> events, std::vector<file_write> files) {
  auto now = system_clock_ms();
  view_records views;
  bool lessons = false;
  for (size_t i = 0; i < events.size(); ++i) {
    auto& e = events[i];
    e.seq = history_.last_seq + 1;
    if (e.unix_ms == 0)
      e.unix_ms = now;
    if (auto ok = apply(history_, e); !ok) {
      if (i > 0) // undo the batch's earlier events; apply left h unchanged
        reload();
      return ok.error();
    }
    for (auto& [key, value] : changed_views(history_, e))
      views[key] = std::move(value);
    lessons = lessons || e.kind == event_kind::learning_added;
  }
  if (lessons)
    files.push_back(learning_document(history_));
  auto done = store_.update([&](txn& t) -> caf::expected<std::vector<uint64_t>> {
    auto copy = events;
    auto seqs = log_.append_in(t, copy);
    if (!seqs)
      return seqs.error();
    for (const auto& f : files)
      if (auto v = files_.put_in(t, f.path, f.bytes, f.author); !v)
        return v.error();
    if (auto ok = put_views(t, store_, views); !ok)
      return ok.error();
    return seqs;
  });
  if (!done)
    reload();
  return done;
}

} // namespace eat::persistence
