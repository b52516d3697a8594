#include "actors/supervisor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

#include "actors/artifacts.hpp"
#include "actors/lessons.hpp"
#include "actors/supervisor_steps.hpp"
#include "actors/team.hpp"

namespace eat {

namespace {

std::string final_reason(const supervisor_state& st) {
  if (!st.stop_reason.empty())
    return st.stop_reason;
  if (st.summary.evaluations >= st.opts.max_evaluations)
    return "max_evaluations reached ("
           + std::to_string(st.opts.max_evaluations) + ")";
  std::string out;
  for (const auto& r : st.team_reasons)
    out += (out.empty() ? "" : "; ") + r;
  return out.empty() ? "all teams finished" : out;
}

/// Ends every team this supervisor spawned (they end their agents), then
/// itself.
void shut_down(supervisor_pointer self) {
  for (const auto& [id, t] : self->state.teams)
    self->send_exit(t, caf::exit_reason::user_shutdown);
  if (self->state.links.planner)
    self->send_exit(self->state.links.planner, caf::exit_reason::user_shutdown);
  self->quit();
}

void finish(supervisor_pointer self) {
  auto& st = self->state;
  if (st.finishing)
    return;
  st.finishing = true;
  if (st.opts.halt)
    st.opts.halt->store(true);
  st.summary.reason = final_reason(st);
  std::vector<event> events;
  std::string lines;
  for (const auto& lesson : derive_lessons(st.scored, st.learnings)) {
    events.push_back(make_event(event_kind::learning_added, lesson));
    lines += "learning " + lesson.id + ": " + lesson.text + "\n";
  }
  if (!lines.empty())
    self->send(st.links.listener, restructure_atom_v, lines);
  events.push_back(make_event(event_kind::run_finished, st.summary));
  self
    ->request(st.links.store, caf::infinite, commit_atom_v, std::move(events),
              std::vector<file_write>{})
    .then(
      [=](uint64_t) {
        self->state.promise.deliver(self->state.summary);
        shut_down(self);
      },
      [=](caf::error& err) {
        self->state.promise.deliver(err);
        shut_down(self);
      });
}

agent_factory builtin_factory(const builtin_agent_options& opts) {
  return [opts](caf::actor_system& sys, const std::string&,
                const std::string&) -> agent_actor {
    return sys.spawn(builtin_agent, opts);
  };
}

/// Records and logs the run's first teams, then launches them.
void spawn_new_teams(supervisor_pointer self) {
  auto& st = self->state;
  std::vector<event> events;
  std::vector<file_write> files;
  std::vector<std::string> ids;
  for (uint32_t i = 0; i < st.opts.teams; ++i) {
    auto id = team_id(st.next_team++);
    auto& r = st.records[id];
    r.strategy = st.opts.strategy;
    r.device = i;
    team_spawned x;
    x.team = id;
    x.strategy = r.strategy;
    for (uint32_t a = 0; a < st.opts.agents_per_team; ++a)
      r.agents.push_back(id + ".a" + std::to_string(a + 1));
    x.agents = r.agents;
    x.reason = "initial team " + std::to_string(i + 1) + " of "
               + std::to_string(st.opts.teams)
               + ", starting from the task's baseline";
    events.push_back(make_event(event_kind::team_spawned, x));
    for (const auto& agent : x.agents)
      events.push_back(make_event(event_kind::agent_assigned,
                                  agent_assigned{id, agent, st.opts.agent_role,
                                                 st.opts.agent_backend}));
    files.push_back(team_notes(x));
    st.history.teams[id].spawned = x;
    st.active.insert(id);
    ids.push_back(id);
  }
  auto budgets = resplit(st, "initial split among "
                               + std::to_string(st.opts.teams) + " teams",
                         true);
  events.insert(events.end(), budgets.begin(), budgets.end());
  self
    ->request(st.links.store, caf::infinite, commit_atom_v, std::move(events),
              std::move(files))
    .then(
      [=](uint64_t) {
        for (const auto& id : ids)
          launch(self, id, self->state.history.teams[id]);
      },
      [=](caf::error& err) {
        for (const auto& id : ids)
          team_done(self, id, "cannot log team: " + render(err));
      });
}

/// Rebuilds the records of the active teams of a resumed run and launches
/// them with the budgets left.
void resume_teams(supervisor_pointer self) {
  auto& st = self->state;
  size_t index = 0;
  for (const auto& [id, h] : st.history.teams)
    if (h.active)
      st.active.insert(id);
  if (st.active.empty())
    return finish(self);
  resplit(st, "resumed", true);
  for (const auto& [id, h] : st.history.teams)
    if (h.active) {
      st.records[id].device = index++;
      launch(self, id, h);
    }
}

void on_stop(supervisor_pointer self, const std::string& why);

/// Stops the run when its best kernel has reached a configured target.
void check_targets(supervisor_pointer self) {
  auto& st = self->state;
  const auto& s = st.summary;
  if (st.opts.target_speedup > 0 && s.best_speedup >= st.opts.target_speedup) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "target speedup reached (%.2fx >= %.2fx)",
                  s.best_speedup, st.opts.target_speedup);
    return on_stop(self, buf);
  }
  if (st.opts.target_sol_fraction <= 0 || s.best_workloads.empty())
    return;
  for (const auto& w : s.best_workloads)
    if (w.sol_fraction < st.opts.target_sol_fraction)
      return;
  on_stop(self, "target fraction of speed of light reached");
}

/// Feeds the plateau trackers; restructures a team or the run on a plateau.
void watch_plateau(supervisor_pointer self, const team_progress& p) {
  auto& st = self->state;
  auto& record = st.records[p.team];
  auto i = st.trackers.find(p.team);
  if (i == st.trackers.end())
    i = st.trackers.emplace(p.team, plateau_tracker{st.opts.plateau}).first;
  i->second.add(p.last_candidate, p.last_result, record.strategy);
  st.run_tracker.add(p.last_candidate, p.last_result, record.strategy);
  if (!st.opts.restructure || !st.stop_reason.empty() || st.finishing
      || record.ending || st.active.count(p.team) == 0)
    return;
  if (i->second.on_plateau() && st.restructuring.count(p.team) == 0)
    return restructure(self, p.team);
  // The run is on a plateau after a window per working team without an
  // improvement by any of them.
  auto run_window = static_cast<size_t>(st.opts.plateau.window)
                    * std::max<size_t>(working_teams(st).size(), 1);
  if (st.opts.plateau.window > 0 && st.run_tracker.window_length() >= run_window
      && st.restructuring.empty())
    restructure(self, "run");
}

/// A team's report of an assignment that ended without a candidate
/// (team_progress without one): its tokens count, and the listener says so.
void on_failed_proposal(supervisor_pointer self, const team_progress& p) {
  auto& st = self->state;
  auto& record = st.records[p.team];
  if (p.tokens > record.tokens) {
    st.summary.tokens
      = saturating_add(st.summary.tokens, p.tokens - record.tokens);
    record.tokens = p.tokens;
  }
  self->send(st.links.listener, restructure_atom_v,
    p.team + ": " + p.last_result.detail + "\n");
}

void on_progress(supervisor_pointer self, const team_progress& p) {
  auto& st = self->state;
  auto& s = st.summary;
  const auto& c = p.last_candidate;
  const auto& r = p.last_result;
  if (c.id.empty())
    return on_failed_proposal(self, p);
  auto ok = r.status == eval_status::passed;
  st.scored.push_back(
    {c.id, c.family, c.params, r.status, ok ? r.geomean_speedup : 0.0});
  auto& record = st.records[p.team];
  // The team's tokens since its last progress: its candidate's, and those
  // of proposals that failed in between (proposal_failed).
  auto spent = p.tokens > record.tokens ? p.tokens - record.tokens : 0;
  record.evaluated = p.evaluated;
  record.tokens = p.tokens;
  if (ok && r.geomean_speedup > record.best.speedup)
    record.best = st.scored.back();
  s.evaluations += 1;
  s.tokens = saturating_add(s.tokens, spent);
  if (ok) {
    s.passed += 1;
    if (r.geomean_speedup > s.best_speedup) {
      s.best_speedup = r.geomean_speedup;
      s.best_candidate = c.id;
      s.best_team = p.team;
      s.best_family = c.family;
      s.best_params = c.params;
      s.best_source = c.source;
      s.best_workloads = r.workloads;
    }
  }
  self->send(st.links.listener, progress_atom_v, p);
  judge_outcomes(self, p);
  watch_plateau(self, p);
  check_targets(self);
}

void on_stop(supervisor_pointer self, const std::string& why) {
  auto& st = self->state;
  if (!st.stop_reason.empty() || st.finishing)
    return;
  st.stop_reason = why;
  if (st.opts.halt)
    st.opts.halt->store(true);
  for (const auto& [id, t] : st.teams)
    if (st.active.count(id) > 0)
      self->send(t, stop_atom_v);
}

/// Loads the state of a run so far into a fresh supervisor.
void load_history(supervisor_state& st, run_history history) {
  st.summary = summarize(history, "");
  st.learnings = history.learnings;
  for (const auto& [id, t] : history.teams) {
    auto& r = st.records[id];
    r.strategy = t.spawned.strategy;
    r.agents = t.spawned.agents;
    r.evaluated = t.scored.size();
    r.tokens = t.tokens;
    st.scored.insert(st.scored.end(), t.scored.begin(), t.scored.end());
    st.tried.insert(st.tried.end(), t.scored.begin(), t.scored.end());
    for (const auto& c : t.unfinished)
      st.tried.push_back({c.id, c.family, c.params, eval_status::pending, 0});
    for (const auto& s : t.scored)
      if (s.status == eval_status::passed && s.speedup > r.best.speedup)
        r.best = s;
    if (!t.spawned.parent.empty())
      for (const auto& s : st.scored)
        if (s.id == t.spawned.parent)
          r.parent = s;
    auto& tracker
      = st.trackers.emplace(id, plateau_tracker{st.opts.plateau}).first->second;
    for (const auto& s : t.scored) {
      tracker.add(history.candidates.at(s.id), history.results.at(s.id),
                  r.strategy);
      st.run_tracker.add(history.candidates.at(s.id), history.results.at(s.id),
                         r.strategy);
    }
    auto n = static_cast<uint32_t>(std::strtoul(id.c_str() + 1, nullptr, 10));
    st.next_team = std::max(st.next_team, n + 1);
  }
  st.history = std::move(history);
}

} // namespace

std::string team_id(uint32_t n) {
  return "t" + std::to_string(n);
}

void launch(supervisor_pointer self, const std::string& id, team_history past) {
  auto& st = self->state;
  auto& r = st.records[id];
  team_options opts;
  opts.id = id;
  opts.strategy = r.strategy;
  opts.task = st.opts.task;
  opts.run_seed = st.opts.seed;
  opts.evaluation_budget = r.limit > r.evaluated ? r.limit - r.evaluated : 0;
  opts.token_budget = std::numeric_limits<uint64_t>::max();
  if (st.opts.token_budget > 0)
    opts.token_budget = r.token_limit > r.tokens ? r.token_limit - r.tokens : 0;
  opts.parent = r.parent;
  opts.agent_names = r.agents;
  auto own = id + "-c";
  for (const auto& s : st.tried)
    if (s.id.compare(0, own.size(), own) != 0)
      opts.elsewhere.push_back(s);
  team_links links;
  auto factory = st.links.make_agent ? st.links.make_agent
                                     : builtin_factory(st.opts.agent);
  auto* sys = &self->system();
  links.make_agent = [factory, sys, id](const std::string& name) {
    return factory(*sys, id, name);
  };
  auto device = r.device % st.links.devices.size();
  links.device = st.links.devices[device];
  if (device < st.links.device_names.size())
    opts.device_name = st.links.device_names[device];
  links.store = st.links.store;
  links.supervisor = self;
  auto t = self->spawn(team, std::move(opts), std::move(links),
                       std::move(past));
  self->monitor(t);
  st.teams[id] = t;
  self->send(t, start_atom_v);
  if (!st.stop_reason.empty())
    self->send(t, stop_atom_v);
}

void team_done(supervisor_pointer self, std::string id, std::string why) {
  auto& st = self->state;
  if (st.active.count(id) == 0)
    return;
  if (why.rfind(crashed_agent_prefix, 0) == 0 && st.stop_reason.empty()
      && !st.finishing && !st.records[id].ending)
    return restart_team(self, id, why);
  st.active.erase(id);
  auto ending = st.records[id].ending;
  if (!ending)
    st.team_reasons.push_back(id + ": " + why);
  if (st.active.empty())
    return finish(self);
  // A team that ends with budget left (ended by a plan, retired, out of
  // ideas) hands it to the others.
  const auto& r = st.records[id];
  if ((ending || r.limit > r.evaluated) && st.stop_reason.empty()
      && !working_teams(st).empty()) {
    auto events = resplit(st, "team " + id + " ended");
    self
      ->request(st.links.store, caf::infinite, commit_atom_v,
                std::move(events), std::vector<file_write>{})
      .then([=](uint64_t) { apply_budgets(self); },
            [=](caf::error&) { apply_budgets(self); });
  }
}

supervisor_actor::behavior_type supervisor(supervisor_pointer self,
                                           supervisor_options opts,
                                           supervisor_links links,
                                           run_history history) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.links = std::move(links);
  st.run_tracker = plateau_tracker{
    {st.opts.plateau.window * std::max<uint32_t>(st.opts.teams, 1),
     st.opts.plateau.threshold}};
  load_history(st, std::move(history));
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    for (const auto& [id, t] : st.teams)
      if (t.address() == dm.source && st.active.count(id) > 0) {
        auto why = "team crashed: " + render(dm.reason);
        if (st.stop_reason.empty() && !st.finishing && !st.records[id].ending)
          return restart_team(self, id, why);
        return team_done(self, id, why);
      }
  });
  return {
    [=](run_atom) -> caf::typed_response_promise<run_summary> {
      auto& st = self->state;
      st.promise = self->make_response_promise<run_summary>();
      if (st.history.evaluations >= st.opts.max_evaluations) {
        finish(self);
        return st.promise;
      }
      if (st.opts.max_wall_s > 0) {
        auto ms = static_cast<int64_t>(st.opts.max_wall_s * 1000);
        self->delayed_send(self, std::chrono::milliseconds{ms}, stop_atom_v,
                           std::string{"max_wall_s reached"});
      }
      if (st.history.teams.empty())
        spawn_new_teams(self);
      else
        resume_teams(self);
      return st.promise;
    },
    [=](progress_atom, const team_progress& p) { on_progress(self, p); },
    [=](done_atom, const std::string& id, const std::string& why) {
      team_done(self, id, why);
    },
    [=](stop_atom, const std::string& why) { on_stop(self, why); },
    [=](tried_atom, const std::string& from, const scored_candidate& c) {
      auto& st = self->state;
      for (const auto& t : st.tried)
        if (t.family == c.family && t.params == c.params)
          return false;
      st.tried.push_back(c);
      // Sent before the reply, so a team that hears "false" has already
      // heard of the candidate it collided with.
      for (const auto& [id, t] : st.teams)
        if (id != from && st.active.count(id) > 0)
          self->send(t, tried_atom_v, c);
      return true;
    },
  };
}

} // namespace eat
