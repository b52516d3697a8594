#include "persistence/run_history.hpp"

#include "actors/protocol/wire.hpp"

namespace eat {

namespace {

caf::error bad_event(const event& e, const std::string& what) {
  return make_error(error::store_failure, "event " + std::to_string(e.seq)
                                            + " (" + to_string(e.kind)
                                            + "): " + what);
}

caf::expected<void> on_submitted(run_history& h, const event& e,
                                 candidate c) {
  auto team = h.teams.find(c.team);
  if (team == h.teams.end())
    return bad_event(e, "candidate " + c.id + " of unknown team " + c.team);
  if (h.candidates.count(c.id) > 0)
    return bad_event(e, "candidate " + c.id + " submitted twice");
  team->second.submitted += 1;
  team->second.tokens += c.tokens;
  team->second.unfinished.push_back(c);
  h.tokens += c.tokens;
  h.candidates.emplace(c.id, std::move(c));
  return caf::unit;
}

caf::expected<void> on_evaluated(run_history& h, const event& e,
                                 eval_result r) {
  auto c = h.candidates.find(r.candidate);
  if (c == h.candidates.end())
    return bad_event(e, "result for unknown candidate " + r.candidate);
  if (h.results.count(r.candidate) > 0)
    return bad_event(e, "candidate " + r.candidate + " evaluated twice");
  auto& team = h.teams[c->second.team];
  std::erase_if(team.unfinished,
                [&](const candidate& x) { return x.id == r.candidate; });
  auto passed = r.status == eval_status::passed;
  team.scored.push_back({c->second.id, c->second.family, c->second.params,
                         r.status, passed ? r.geomean_speedup : 0.0});
  h.evaluations += 1;
  if (passed) {
    h.passed += 1;
    if (r.geomean_speedup > h.best_speedup) {
      h.best_speedup = r.geomean_speedup;
      h.best_candidate = r.candidate;
    }
  }
  h.results.emplace(r.candidate, std::move(r));
  return caf::unit;
}

template <class T>
caf::expected<T> body(const event& e) {
  auto x = wire::decode<T>(e.body);
  if (!x)
    return bad_event(e, render(x.error()));
  return x;
}

} // namespace

caf::expected<void> apply(run_history& h, const event& e) {
  if (e.seq != h.last_seq + 1)
    return bad_event(e, "expected sequence number "
                          + std::to_string(h.last_seq + 1));
  if (!h.started && e.kind != event_kind::run_started)
    return bad_event(e, "the log does not begin with run_started");
  h.last_seq = e.seq;
  switch (e.kind) {
    case event_kind::run_started: {
      if (h.started)
        return bad_event(e, "second run_started");
      auto x = body<run_started>(e);
      if (!x)
        return x.error();
      h.started = true;
      h.start = std::move(*x);
      return caf::unit;
    }
    case event_kind::team_spawned: {
      auto x = body<team_spawned>(e);
      if (!x)
        return x.error();
      h.teams[x->team].spawned = std::move(*x);
      return caf::unit;
    }
    case event_kind::candidate_submitted: {
      auto x = body<candidate>(e);
      if (!x)
        return x.error();
      h.finished = false;
      return on_submitted(h, e, std::move(*x));
    }
    case event_kind::evaluation_finished: {
      auto x = body<eval_result>(e);
      if (!x)
        return x.error();
      return on_evaluated(h, e, std::move(*x));
    }
    case event_kind::run_finished: {
      auto x = body<run_summary>(e);
      if (!x)
        return x.error();
      h.finished = true;
      h.last_summary = std::move(*x);
      return caf::unit;
    }
    case event_kind::run_resumed: {
      auto x = body<eat::run_resumed>(e);
      if (!x)
        return x.error();
      h.resumes += 1;
      h.finished = false;
      return caf::unit;
    }
  }
  return bad_event(e, "unknown event kind");
}

caf::expected<run_history> rebuild(const std::vector<event>& events) {
  run_history h;
  for (const auto& e : events)
    if (auto ok = apply(h, e); !ok)
      return ok.error();
  return h;
}

run_summary summarize(const run_history& h, std::string reason) {
  run_summary s;
  s.run_id = h.start.run_id;
  s.reason = std::move(reason);
  s.evaluations = h.evaluations;
  s.passed = h.passed;
  s.tokens = h.tokens;
  s.best_candidate = h.best_candidate;
  s.best_speedup = h.best_speedup;
  if (auto c = h.candidates.find(h.best_candidate); c != h.candidates.end()) {
    s.best_team = c->second.team;
    s.best_family = c->second.family;
    s.best_params = c->second.params;
    s.best_source = c->second.source;
  }
  if (auto r = h.results.find(h.best_candidate); r != h.results.end())
    s.best_workloads = r->second.workloads;
  return s;
}

} // namespace eat
