#include "persistence/run_history.hpp"

#include "actors/protocol/wire.hpp"

namespace eat {

namespace {

caf::error bad_event(const event& e, const std::string& what) {
  return make_error(error::store_failure, "event " + std::to_string(e.seq)
                                            + " (" + to_string(e.kind)
                                            + "): " + what);
}

template <class T>
caf::expected<T> body(const event& e) {
  auto x = wire::decode<T>(e.body);
  if (!x)
    return bad_event(e, render(x.error()));
  return x;
}

// Each handler checks everything before it changes `h`, so that a failed
// event leaves the history as it was.

caf::expected<void> on_started(run_history& h, const event& e,
                               run_started x) {
  if (h.started)
    return bad_event(e, "second run_started");
  h.started = true;
  h.start = std::move(x);
  return caf::unit;
}

caf::expected<void> on_spawned(run_history& h, const event& e,
                               team_spawned x) {
  if (x.team.empty())
    return bad_event(e, "team without an id");
  if (auto t = h.teams.find(x.team); t != h.teams.end() && t->second.active)
    return bad_event(e, "team " + x.team + " already exists");
  auto& t = h.teams[x.team];
  t = team_history{};
  t.spawned = std::move(x);
  return caf::unit;
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
  h.finished = false;
  h.candidates.emplace(c.id, std::move(c));
  return caf::unit;
}

caf::expected<void> on_proposal_failed(
  run_history& h, const event& e, const proposal_failed& x) {
  auto team = h.teams.find(x.team);
  if (team == h.teams.end())
    return bad_event(e, "failed proposal of unknown team " + x.team);
  team->second.failed_proposals += 1;
  team->second.tokens = saturating_add(team->second.tokens, x.tokens);
  h.tokens = saturating_add(h.tokens, x.tokens);
  return caf::unit;
}

caf::expected<void> on_agent_evaluated(
  run_history& h, const event& e, const agent_evaluated& x) {
  auto team = h.teams.find(x.team);
  if (team == h.teams.end())
    return bad_event(e, "./eval of unknown team " + x.team);
  team->second.agent_evaluations += 1;
  return caf::unit;
}

caf::expected<void> on_evaluation_started(run_history& h, const event& e,
                                          evaluation_started x) {
  if (h.candidates.count(x.candidate) == 0)
    return bad_event(e, "evaluation of unknown candidate " + x.candidate);
  if (h.results.count(x.candidate) > 0)
    return bad_event(e, "candidate " + x.candidate + " was evaluated already");
  h.in_flight.insert(x.candidate);
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
  h.in_flight.erase(r.candidate);
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

/// Checks that every team in `ids` exists and is active.
caf::expected<void> check_active(const run_history& h, const event& e,
                                 const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    auto t = h.teams.find(id);
    if (t == h.teams.end())
      return bad_event(e, "unknown team " + id);
    if (!t->second.active)
      return bad_event(e, "team " + id + " has ended already");
  }
  return caf::unit;
}

caf::expected<void> end_teams(run_history& h, const event& e,
                              const std::vector<std::string>& ids) {
  if (auto ok = check_active(h, e, ids); !ok)
    return ok;
  for (const auto& id : ids) {
    h.teams[id].active = false;
    h.teams[id].ended_by = to_string(e.kind);
  }
  return caf::unit;
}

caf::expected<void> on_restructured(run_history& h, const event& e,
                                    const team_restructured& x) {
  if (auto ok = check_active(h, e, {x.team}); !ok)
    return ok;
  auto& s = h.teams[x.team].spawned;
  if (!x.strategy.empty())
    s.strategy = x.strategy;
  if (!x.agents.empty())
    s.agents = x.agents;
  if (!x.parent.empty())
    s.parent = x.parent;
  return caf::unit;
}

caf::expected<void> on_assigned(run_history& h, const event& e,
                                agent_assigned x) {
  if (auto ok = check_active(h, e, {x.team}); !ok)
    return ok;
  h.teams[x.team].assignments.push_back(std::move(x));
  return caf::unit;
}

caf::expected<void> on_budget(run_history& h, const event& e,
                              budget_changed x) {
  if (x.scope == "run") {
    h.budget = std::move(x);
    return caf::unit;
  }
  if (auto ok = check_active(h, e, {x.scope}); !ok)
    return ok;
  h.teams[x.scope].budget = std::move(x);
  return caf::unit;
}

caf::expected<void> on_learning(run_history& h, const event& e,
                                learning_entry x) {
  if (auto ok = check_learning(x, h.learnings); !ok)
    return bad_event(e, render(ok.error()));
  for (const auto& id : x.evidence)
    if (h.candidates.count(id) == 0)
      return bad_event(e, "lesson " + x.id + " cites unknown candidate " + id);
  h.learnings.push_back(std::move(x));
  return caf::unit;
}

caf::expected<void> on_node_lost(run_history& h, const event& e,
                                 const node_lost& x) {
  if (h.nodes.erase(x.node) == 0)
    return bad_event(e, "unknown node " + x.node);
  return caf::unit;
}

/// Decodes the body as `T` and hands it to `f`.
template <class T, class F>
caf::expected<void> with_body(const event& e, F f) {
  auto x = body<T>(e);
  if (!x)
    return x.error();
  return f(std::move(*x));
}

caf::expected<void> dispatch(run_history& h, const event& e) {
  switch (e.kind) {
    case event_kind::run_started:
      return with_body<run_started>(
        e, [&](auto x) { return on_started(h, e, std::move(x)); });
    case event_kind::team_spawned:
      return with_body<team_spawned>(
        e, [&](auto x) { return on_spawned(h, e, std::move(x)); });
    case event_kind::candidate_submitted:
      return with_body<candidate>(
        e, [&](auto x) { return on_submitted(h, e, std::move(x)); });
    case event_kind::evaluation_finished:
      return with_body<eval_result>(
        e, [&](auto x) { return on_evaluated(h, e, std::move(x)); });
    case event_kind::run_finished:
      return with_body<run_summary>(e, [&](auto x) -> caf::expected<void> {
        h.finished = true;
        h.last_summary = std::move(x);
        return caf::unit;
      });
    case event_kind::run_resumed:
      return with_body<run_resumed>(e, [&](auto) -> caf::expected<void> {
        h.resumes += 1;
        h.finished = false;
        h.in_flight.clear();
        return caf::unit;
      });
    case event_kind::evaluation_started:
      return with_body<evaluation_started>(
        e, [&](auto x) { return on_evaluation_started(h, e, std::move(x)); });
    case event_kind::team_dissolved:
      return with_body<team_dissolved>(
        e, [&](auto x) { return end_teams(h, e, {x.team}); });
    case event_kind::team_split:
      return with_body<team_split>(
        e, [&](auto x) { return end_teams(h, e, {x.team}); });
    case event_kind::team_merged:
      return with_body<team_merged>(
        e, [&](auto x) { return end_teams(h, e, x.teams); });
    case event_kind::team_restructured:
      return with_body<team_restructured>(
        e, [&](auto x) { return on_restructured(h, e, x); });
    case event_kind::agent_assigned:
      return with_body<agent_assigned>(
        e, [&](auto x) { return on_assigned(h, e, std::move(x)); });
    case event_kind::budget_changed:
      return with_body<budget_changed>(
        e, [&](auto x) { return on_budget(h, e, std::move(x)); });
    case event_kind::learning_added:
      return with_body<learning_entry>(
        e, [&](auto x) { return on_learning(h, e, std::move(x)); });
    case event_kind::node_joined:
      return with_body<node_joined>(e, [&](auto x) -> caf::expected<void> {
        h.nodes[x.node] = std::move(x);
        return caf::unit;
      });
    case event_kind::node_lost:
      return with_body<node_lost>(
        e, [&](auto x) { return on_node_lost(h, e, x); });
    case event_kind::operator_action:
      return with_body<operator_action>(e, [&](auto x) -> caf::expected<void> {
        h.operator_actions.push_back(std::move(x));
        return caf::unit;
      });
    case event_kind::proposal_failed:
      return with_body<proposal_failed>(e, [&](auto x) {
        return on_proposal_failed(h, e, x);
      });
    case event_kind::agent_evaluated:
      return with_body<agent_evaluated>(e, [&](auto x) {
        return on_agent_evaluated(h, e, x);
      });
  }
  return bad_event(e, "unknown event kind");
}

} // namespace

caf::expected<void> apply(run_history& h, const event& e) {
  if (e.seq != h.last_seq + 1)
    return bad_event(e, "expected sequence number "
                          + std::to_string(h.last_seq + 1));
  if (!h.started && e.kind != event_kind::run_started)
    return bad_event(e, "the log does not begin with run_started");
  if (auto ok = dispatch(h, e); !ok)
    return ok;
  h.last_seq = e.seq;
  return caf::unit;
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
