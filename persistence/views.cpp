#include "persistence/views.hpp"

#include "actors/protocol/wire.hpp"

namespace eat {

namespace {

std::string run_record(const run_history& h) {
  run_view v;
  v.run_id = h.start.run_id;
  v.task = h.start.task;
  v.seed = h.start.seed;
  v.max_evaluations = h.start.max_evaluations;
  v.last_seq = h.last_seq;
  v.evaluations = h.evaluations;
  v.passed = h.passed;
  v.tokens = h.tokens;
  v.teams = h.teams.size();
  for (const auto& [id, t] : h.teams)
    v.active_teams += t.active ? 1 : 0;
  v.learnings = h.learnings.size();
  v.resumes = h.resumes;
  v.best_candidate = h.best_candidate;
  v.best_speedup = h.best_speedup;
  v.finished = h.finished;
  if (h.finished)
    v.stop_reason = h.last_summary.reason;
  return wire::encode(v);
}

std::string team_record(const team_history& t) {
  team_view v;
  v.team = t.spawned.team;
  v.strategy = t.spawned.strategy;
  v.active = t.active;
  v.submitted = t.submitted;
  v.evaluated = t.scored.size();
  v.tokens = t.tokens;
  v.agent_evaluations = t.agent_evaluations;
  for (const auto& s : t.scored) {
    if (s.status != eval_status::passed)
      continue;
    v.passed += 1;
    if (s.speedup > v.best_speedup) {
      v.best_speedup = s.speedup;
      v.best_candidate = s.id;
    }
  }
  return wire::encode(v);
}

std::string candidate_record(const run_history& h, const candidate& c) {
  candidate_view v;
  v.id = c.id;
  v.team = c.team;
  v.family = c.family;
  if (auto r = h.results.find(c.id); r != h.results.end()) {
    v.status = r->second.status;
    v.speedup = r->second.geomean_speedup;
  }
  return wire::encode(v);
}

void add_team(view_records& out, const run_history& h, const std::string& id) {
  if (auto t = h.teams.find(id); t != h.teams.end())
    out["team/" + id] = team_record(t->second);
}

void add_candidate(view_records& out, const run_history& h,
                   const std::string& id) {
  auto c = h.candidates.find(id);
  if (c == h.candidates.end())
    return;
  out["candidate/" + id] = candidate_record(h, c->second);
  add_team(out, h, c->second.team);
}

/// Adds the team and candidate records an event names.
void add_touched(view_records& out, const run_history& h, const event& e) {
  auto decoded = [&](auto tag) {
    return wire::decode<decltype(tag)>(e.body);
  };
  switch (e.kind) {
    case event_kind::team_spawned:
      if (auto x = decoded(team_spawned{}))
        add_team(out, h, x->team);
      break;
    case event_kind::candidate_submitted:
      if (auto x = decoded(candidate{}))
        add_candidate(out, h, x->id);
      break;
    case event_kind::evaluation_finished:
      if (auto x = decoded(eval_result{}))
        add_candidate(out, h, x->candidate);
      break;
    case event_kind::team_dissolved:
      if (auto x = decoded(team_dissolved{}))
        add_team(out, h, x->team);
      break;
    case event_kind::proposal_failed:
      if (auto x = decoded(proposal_failed{}))
        add_team(out, h, x->team);
      break;
    case event_kind::agent_evaluated:
      if (auto x = decoded(agent_evaluated{}))
        add_team(out, h, x->team);
      break;
    case event_kind::team_split:
      if (auto x = decoded(team_split{}))
        add_team(out, h, x->team);
      break;
    case event_kind::team_merged:
      if (auto x = decoded(team_merged{}))
        for (const auto& id : x->teams)
          add_team(out, h, id);
      break;
    case event_kind::team_restructured:
      if (auto x = decoded(team_restructured{}))
        add_team(out, h, x->team);
      break;
    default:
      break; // the other kinds change only the run record
  }
}

} // namespace

view_records all_views(const run_history& h) {
  view_records out;
  out["run"] = run_record(h);
  for (const auto& [id, t] : h.teams)
    out["team/" + id] = team_record(t);
  for (const auto& [id, c] : h.candidates)
    out["candidate/" + id] = candidate_record(h, c);
  return out;
}

view_records changed_views(const run_history& h, const event& e) {
  view_records out;
  out["run"] = run_record(h);
  add_touched(out, h, e);
  return out;
}

namespace persistence {

caf::expected<void> put_views(txn& t, const store& s,
                              const view_records& records) {
  auto views_db = s.handle(db::views);
  for (const auto& [key, value] : records)
    if (auto ok = t.put(views_db, key, value); !ok)
      return ok;
  return caf::unit;
}

caf::expected<view_records> read_views(const store& s) {
  auto views_db = s.handle(db::views);
  return s.view([&](txn& t) -> caf::expected<view_records> {
    view_records out;
    auto c = t.open_cursor(views_db);
    if (!c)
      return c.error();
    for (auto rec = c->first();; rec = c->next()) {
      if (!rec)
        return rec.error();
      if (!*rec)
        break;
      out.emplace(std::string{(*rec)->first}, std::string{(*rec)->second});
    }
    return out;
  });
}

} // namespace persistence

} // namespace eat
