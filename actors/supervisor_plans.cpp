// The supervisor's restructuring (actors/supervisor.hpp): diagnosis, policy,
// logging and carrying out a plan, budget splits, crash restarts, and the
// lessons restructurings teach.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "actors/artifacts.hpp"
#include "actors/protocol/json.hpp"
#include "actors/supervisor_steps.hpp"
#include "actors/team.hpp"

namespace eat {

namespace {

using action = std::function<void()>;

/// What carrying out a plan logs and then does.
struct plan_effects {
  std::vector<event> events;
  std::vector<file_write> files;
  std::vector<action> actions;
};

const scored_candidate* scored_by_id(const supervisor_state& st,
                                     const std::string& id) {
  for (const auto& s : st.scored)
    if (s.id == id)
      return &s;
  return nullptr;
}

/// The candidate a parent spec names (see team_operation::parent).
scored_candidate resolve_parent(const supervisor_state& st,
                                const std::string& spec) {
  if (spec == "best") {
    const auto* s = scored_by_id(st, st.summary.best_candidate);
    return s != nullptr ? *s : scored_candidate{};
  }
  if (spec.rfind("team:", 0) == 0) {
    auto i = st.records.find(spec.substr(5));
    return i != st.records.end() ? i->second.best : scored_candidate{};
  }
  const auto* s = scored_by_id(st, spec);
  return s != nullptr ? *s : scored_candidate{};
}

run_snapshot snapshot(const supervisor_state& st) {
  run_snapshot run;
  for (const auto& id : working_teams(st)) {
    const auto& r = st.records.at(id);
    run.teams.push_back({id, r.strategy, r.agents, r.evaluated, r.best.id,
                         r.best.speedup, r.restructures, r.weight});
  }
  run.best_candidate = st.summary.best_candidate;
  run.best_team = st.summary.best_team;
  run.best_speedup = st.summary.best_speedup;
  run.evaluations = st.summary.evaluations;
  run.evaluations_left = st.opts.max_evaluations > st.summary.evaluations
                           ? st.opts.max_evaluations - st.summary.evaluations
                           : 0;
  run.max_teams = st.opts.max_teams;
  for (const auto& f : st.opts.task.families)
    run.families.push_back(f.name);
  for (const auto& s : st.scored)
    if (s.status == eval_status::passed)
      run.passed_candidates.push_back(s.id);
  run.threshold = st.opts.plateau.threshold;
  return run;
}

void send_change(supervisor_pointer self, const std::string& id,
                 team_change change) {
  auto i = self->state.teams.find(id);
  if (i != self->state.teams.end())
    self->send(i->second, restructure_atom_v, std::move(change));
}

void stop_team(supervisor_pointer self, const std::string& id) {
  auto i = self->state.teams.find(id);
  if (i != self->state.teams.end())
    self->send(i->second, stop_atom_v);
}

/// Records a new team and the events that log it.
std::string new_team(supervisor_pointer self, const std::string& strategy,
                     const scored_candidate& parent,
                     std::vector<std::string> agents, const std::string& reason,
                     plan_effects& out) {
  auto& st = self->state;
  auto id = team_id(st.next_team++);
  auto& r = st.records[id];
  r.strategy = strategy;
  r.parent = parent;
  r.agents = std::move(agents);
  r.device = st.next_team;
  team_spawned x{id, strategy, r.agents, parent.id, reason};
  out.events.push_back(make_event(event_kind::team_spawned, x));
  for (const auto& a : r.agents)
    out.events.push_back(make_event(event_kind::agent_assigned,
                                    agent_assigned{id, a, st.opts.agent_role,
                                                   st.opts.agent_backend}));
  out.files.push_back(team_notes(x));
  st.history.teams[id] = team_history{};
  st.history.teams[id].spawned = x;
  st.active.insert(id);
  st.outcomes[id] = {"spawning team " + id + " (" + strategy + "): " + reason,
                     st.summary.best_speedup, st.summary.evaluations};
  out.actions.push_back([self, id] {
    launch(self, id, self->state.history.teams[id]);
  });
  return id;
}

std::vector<std::string> fresh_agents(uint32_t n, uint32_t serial) {
  std::vector<std::string> out;
  for (uint32_t a = 0; a < std::max<uint32_t>(n, 1); ++a)
    out.push_back(team_id(serial) + ".a" + std::to_string(a + 1));
  return out;
}

/// Ends team `id` as part of a plan: it finishes its evaluation in flight.
void end_team(supervisor_pointer self, const std::string& id,
              plan_effects& out) {
  self->state.records[id].ending = true;
  self->state.outcomes.erase(id);
  out.actions.push_back([self, id] { stop_team(self, id); });
}

void apply_operation(supervisor_pointer self, const team_operation& x,
                     const std::string& diagnosis, plan_effects& out) {
  auto& st = self->state;
  auto first = x.teams.empty() ? std::string{} : x.teams.front();
  if (x.op == "set_strategy" || x.op == "set_parent" || x.op == "set_weight") {
    auto& r = st.records[first];
    r.restructures += 1;
    team_restructured e{first, {}, {}, {}, diagnosis, x.reason};
    team_change change;
    if (x.op == "set_strategy") {
      r.strategy = e.strategy = change.strategy = x.strategy;
    } else if (x.op == "set_parent") {
      r.parent = change.parent = resolve_parent(st, x.parent);
      e.parent = r.parent.id.empty() ? "baseline" : r.parent.id;
    } else {
      r.weight = x.weight;
      e.reason = "weight " + speedup_text(x.weight).substr(0, 4) + ": " + x.reason;
    }
    st.outcomes[first] = {x.op + " of team " + first + ": " + x.reason,
                          r.best.speedup, st.summary.evaluations};
    out.events.push_back(make_event(event_kind::team_restructured, e));
    out.actions.push_back(
      [self, first, change] { send_change(self, first, change); });
  } else if (x.op == "dissolve") {
    end_team(self, first, out);
    out.events.push_back(make_event(event_kind::team_dissolved,
                                    team_dissolved{first, diagnosis, x.reason}));
  } else if (x.op == "spawn") {
    auto serial = st.next_team;
    new_team(self, x.strategy, resolve_parent(st, x.parent),
             fresh_agents(x.agents, serial), x.reason, out);
  } else if (x.op == "split") {
    auto old = st.records[first];
    auto parent = old.best.status == eval_status::passed ? old.best : old.parent;
    auto half = old.agents.begin() + static_cast<long>(old.agents.size() / 2);
    auto a = st.next_team;
    team_split e{first, {team_id(a), team_id(a + 1)}, diagnosis, x.reason};
    out.events.push_back(make_event(event_kind::team_split, e));
    end_team(self, first, out);
    new_team(self, x.strategies.at(0), parent, {old.agents.begin(), half},
             "split from " + first + ": " + x.reason, out);
    new_team(self, x.strategies.at(1), parent, {half, old.agents.end()},
             "split from " + first + ": " + x.reason, out);
  } else if (x.op == "merge") {
    std::vector<std::string> agents;
    for (const auto& t : x.teams) {
      const auto& r = st.records[t];
      agents.insert(agents.end(), r.agents.begin(), r.agents.end());
    }
    team_merged e{x.teams, team_id(st.next_team), diagnosis, x.reason};
    out.events.push_back(make_event(event_kind::team_merged, e));
    for (const auto& t : x.teams)
      end_team(self, t, out);
    new_team(self, x.strategy, resolve_parent(st, x.parent), agents,
             "merged from " + e.teams.front() + " and others: " + x.reason,
             out);
  } else if (x.op == "move_agent") {
    auto to = x.teams.at(1);
    auto& from_agents = st.records[first].agents;
    from_agents.erase(
      std::remove(from_agents.begin(), from_agents.end(), x.agent),
      from_agents.end());
    st.records[to].agents.push_back(x.agent);
    for (const auto& t : {first, to}) {
      team_restructured e{t, {}, st.records[t].agents, {}, diagnosis, x.reason};
      out.events.push_back(make_event(event_kind::team_restructured, e));
      team_change change;
      change.agents = st.records[t].agents;
      out.actions.push_back([self, t, change] { send_change(self, t, change); });
    }
    out.events.push_back(make_event(event_kind::agent_assigned,
                                    agent_assigned{to, x.agent, st.opts.agent_role,
                                                   st.opts.agent_backend}));
  }
}

/// The lines the listener shows for a plan.
std::string describe_plan(const std::string& id, const restructure_plan& plan,
                          const plateau_diagnosis& d, uint64_t n) {
  std::string out = "plateau: " + (id == "run" ? std::string{"the run"}
                                               : "team " + id)
                    + ", " + std::to_string(d.evaluations_since_improvement)
                    + " evaluations without improvement on "
                    + speedup_text(d.best_speedup) + "\n";
  out += "restructuring " + std::to_string(n) + " (" + plan.policy
         + "): " + plan.rationale + "\n";
  if (!plan.fallback.empty())
    out += "  (llm plan not used: " + plan.fallback.substr(0, 300) + ")\n";
  for (const auto& x : plan.operations) {
    out += "  " + x.op;
    for (const auto& t : x.teams)
      out += " " + t;
    if (!x.strategy.empty())
      out += " -> " + x.strategy;
    out += ": " + x.reason + "\n";
  }
  return out;
}

/// Logs `plan` (with the diagnosis) and the new budgets in one commit, then
/// carries it out.
void apply_plan(supervisor_pointer self, const std::string& id,
                const restructure_plan& plan, const plateau_diagnosis& d) {
  auto& st = self->state;
  st.plans += 1;
  auto diagnosis = "{\"diagnosis\":" + wire::to_json_value(d)
                   + ",\"plan\":" + wire::to_json_value(plan) + "}";
  plan_effects effects;
  for (const auto& x : plan.operations)
    apply_operation(self, x, diagnosis, effects);
  auto budgets = resplit(st, "restructuring " + std::to_string(st.plans) + ": "
                               + plan.rationale);
  effects.events.insert(effects.events.end(), budgets.begin(), budgets.end());
  self
    ->request(st.links.store, caf::infinite, commit_atom_v,
              std::move(effects.events), std::move(effects.files))
    .then(
      [=](uint64_t) {
        auto& st = self->state;
        self->send(st.links.listener, restructure_atom_v,
                   describe_plan(id, plan, d, st.plans));
        for (const auto& a : effects.actions)
          a();
        apply_budgets(self);
        // Any plan is a reaction to the run's progress: the run's window
        // starts again too.
        st.run_tracker.reset_window();
        if (auto t = st.trackers.find(id); t != st.trackers.end())
          t->second.reset_window();
        st.restructuring.erase(id);
      },
      [=](caf::error& err) {
        self->state.restructuring.erase(id);
        self->state.team_reasons.push_back("cannot log a restructuring: "
                                           + render(err));
      });
}

std::string learning_text(const supervisor_state& st) {
  std::string out;
  for (const auto& e : st.learnings)
    out += "- " + e.text + "\n";
  return out.empty() ? "(empty)\n" : out;
}

void add_lesson(supervisor_pointer self, const std::string& team,
                std::string text, std::string evidence) {
  auto& st = self->state;
  learning_entry e;
  char id[16];
  std::snprintf(id, sizeof(id), "L%04zu", st.learnings.size() + 1);
  e.id = id;
  e.text = std::move(text);
  e.author = learning_author::supervisor;
  e.author_name = team;
  e.evidence.push_back(std::move(evidence));
  st.learnings.push_back(e);
  self->send(st.links.listener, restructure_atom_v,
             "learning " + e.id + ": " + e.text + "\n");
  self->request(st.links.store, caf::infinite, append_atom_v,
                make_event(event_kind::learning_added, e))
    .then([](uint64_t) {}, [](caf::error&) {});
}

} // namespace

std::vector<std::string> working_teams(const supervisor_state& st) {
  std::vector<std::string> out;
  for (const auto& id : st.active)
    if (auto r = st.records.find(id); r != st.records.end() && !r->second.ending)
      out.push_back(id);
  return out;
}

namespace {

/// Splits `total` by weight: floors, then one more for the first teams until
/// the remainder is gone.
std::vector<uint64_t> split_by_weight(uint64_t total,
                                      const std::vector<double>& weights) {
  double sum = 0;
  for (auto w : weights)
    sum += w;
  std::vector<uint64_t> out;
  uint64_t given = 0;
  for (auto w : weights) {
    out.push_back(static_cast<uint64_t>(static_cast<double>(total) * w / sum));
    given += out.back();
  }
  for (size_t i = 0; given < total && !out.empty(); i = (i + 1) % out.size()) {
    out[i] += 1;
    given += 1;
  }
  return out;
}

} // namespace

std::vector<event> resplit(supervisor_state& st, const std::string& reason,
                           bool idle) {
  auto working = working_teams(st);
  uint64_t reserved = 0;
  for (const auto& id : st.active)
    if (const auto& r = st.records[id]; r.ending && r.limit > r.evaluated)
      reserved += 1;
  // Each working team may have an evaluation in flight that its count does
  // not show yet: it keeps one for it (the first teams, when fewer are left).
  auto used = st.summary.evaluations + reserved;
  auto left = st.opts.max_evaluations > used ? st.opts.max_evaluations - used
                                             : 0;
  std::vector<uint64_t> kept(working.size(), 0);
  for (size_t i = 0; !idle && i < working.size() && left > 0; ++i, --left)
    kept[i] = 1;
  uint64_t tokens_left = 0;
  if (st.opts.token_budget > st.summary.tokens)
    tokens_left = st.opts.token_budget - st.summary.tokens;
  std::vector<double> weights;
  for (const auto& id : working)
    weights.push_back(st.records[id].weight);
  auto shares = split_by_weight(left, weights);
  auto token_shares = split_by_weight(tokens_left, weights);
  std::vector<event> events;
  for (size_t i = 0; i < working.size(); ++i) {
    auto& r = st.records[working[i]];
    r.limit = r.evaluated + kept[i] + shares[i];
    r.token_limit = st.opts.token_budget > 0 ? r.tokens + token_shares[i] : 0;
    events.push_back(make_event(
      event_kind::budget_changed,
      budget_changed{working[i], kept[i] + shares[i], token_shares[i],
                     reason}));
  }
  return events;
}

void apply_budgets(supervisor_pointer self) {
  auto& st = self->state;
  for (const auto& id : working_teams(st)) {
    const auto& r = st.records[id];
    if (st.links.set_weight)
      st.links.set_weight(id, r.weight);
    if (r.limit == 0) {
      stop_team(self, id);
      continue;
    }
    team_change change;
    change.evaluations = r.limit;
    if (st.opts.token_budget > 0)
      change.tokens = std::max<uint64_t>(
        r.token_limit > r.tokens ? r.token_limit - r.tokens : 0, 1);
    send_change(self, id, change);
  }
}

void restructure(supervisor_pointer self, const std::string& id) {
  auto& st = self->state;
  st.restructuring.insert(id);
  auto d = id == "run"
             ? st.run_tracker.diagnose("run", "", st.opts.task)
             : st.trackers.at(id).diagnose(id, st.records[id].strategy,
                                           st.opts.task);
  auto run = snapshot(st);
  auto seed = mix_seed(st.opts.seed ^ mix_seed(st.plans + 1));
  if (st.opts.policy != "llm" || !st.links.planner)
    return apply_plan(self, id, heuristic_plan(run, d, seed), d);
  auto timeout = std::chrono::milliseconds{
    static_cast<int64_t>(st.opts.plan_timeout_s * 1000)};
  auto fallback = [=](const std::string& why) {
    auto plan = heuristic_plan(run, d, seed);
    plan.fallback = why;
    apply_plan(self, id, plan, d);
  };
  self
    ->request(st.links.planner, timeout, plan_atom_v,
              plan_prompt(run, d, learning_text(st)))
    .then(
      [=](std::string& answer) {
        if (!self->state.stop_reason.empty() || self->state.finishing) {
          self->state.restructuring.erase(id);
          return;
        }
        auto now = snapshot(self->state);
        auto plan = parse_plan(answer, now);
        if (plan)
          return apply_plan(self, id, *plan, d);
        fallback("llm plan rejected: " + render(plan.error())
                 + "; answer: " + answer.substr(0, 2000));
      },
      [=](caf::error& err) {
        if (!self->state.stop_reason.empty() || self->state.finishing) {
          self->state.restructuring.erase(id);
          return;
        }
        fallback("llm planner failed: " + render(err));
      });
}

void judge_outcomes(supervisor_pointer self, const team_progress& p) {
  auto& st = self->state;
  auto i = st.outcomes.find(p.team);
  if (i == st.outcomes.end())
    return;
  const auto& o = i->second;
  const auto& r = st.records[p.team];
  auto window = std::max<uint64_t>(st.opts.plateau.window, 1);
  if (r.best.speedup > o.best_before * (1 + st.opts.plateau.threshold)
      && r.best.status == eval_status::passed) {
    add_lesson(self, p.team,
               "Restructuring paid off: " + o.what + ". Team " + p.team
                 + " then reached " + speedup_text(r.best.speedup) + " (from "
                 + speedup_text(o.best_before) + ") within "
                 + std::to_string(st.summary.evaluations - o.evaluations_at)
                 + " evaluations of the run.",
               r.best.id);
    st.outcomes.erase(i);
  } else if (st.summary.evaluations - o.evaluations_at >= 2 * window) {
    if (!r.best.id.empty())
      add_lesson(self, p.team,
                 "Restructuring did not pay off: " + o.what + ". Team "
                   + p.team + " stayed at " + speedup_text(r.best.speedup)
                   + " for " + std::to_string(2 * window)
                   + " evaluations of the run.",
                 r.best.id);
    st.outcomes.erase(i);
  }
}

void restart_team(supervisor_pointer self, std::string id, std::string why) {
  auto& st = self->state;
  auto& r = st.records[id];
  r.restarts += 1;
  st.teams.erase(id);
  if (r.restarts > st.opts.max_restarts) {
    auto reason = "retired after " + std::to_string(r.restarts - 1)
                  + " restarts: " + why;
    self->request(st.links.store, caf::infinite, append_atom_v,
                  make_event(event_kind::team_dissolved,
                             team_dissolved{id, "", reason}))
      .then([=](uint64_t) { team_done(self, id, reason); },
            [=](caf::error&) { team_done(self, id, reason); });
    return;
  }
  team_restructured note{id, {}, {}, {}, "",
                         "restarted (" + std::to_string(r.restarts) + " of "
                           + std::to_string(st.opts.max_restarts)
                           + ") after a crash: " + why};
  self->request(st.links.store, caf::infinite, append_atom_v,
                make_event(event_kind::team_restructured, note))
    .then(
      [=](uint64_t) {
        self->request(self->state.links.store, caf::infinite, read_atom_v,
                      uint64_t{1})
          .then(
            [=](std::vector<event>& log) {
              auto h = rebuild(log);
              if (!h || h->teams.count(id) == 0)
                return team_done(self, id, "cannot restart: "
                                             + (h ? std::string{"team lost"}
                                                  : render(h.error())));
              self->state.records[id].evaluated = h->teams[id].scored.size();
              launch(self, id, h->teams[id]);
            },
            [=](caf::error& err) {
              team_done(self, id, "cannot restart: " + render(err));
            });
      },
      [=](caf::error& err) {
        team_done(self, id, "cannot log a restart: " + render(err));
      });
}

} // namespace eat
