#include "actors/supervisor.hpp"

#include <chrono>
#include <cstdio>
#include <limits>

#include "actors/artifacts.hpp"
#include "actors/lessons.hpp"
#include "actors/protocol/json.hpp"
#include "actors/protocol/wire.hpp"
#include "actors/team.hpp"

namespace eat {

namespace {

template <class T>
event make_event(event_kind kind, const T& body) {
  event e;
  e.kind = kind;
  e.body = wire::encode(body);
  return e;
}

std::string team_id(uint32_t i) {
  return "t" + std::to_string(i + 1);
}

/// Splits `total` into `n` shares that differ by at most one.
uint64_t share(uint64_t total, size_t n, size_t i) {
  return total / n + (i < total % n ? 1 : 0);
}

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

/// Ends every actor this supervisor spawned, then itself.
void shut_down(supervisor_pointer self) {
  for (const auto& [id, t] : self->state.teams)
    self->send_exit(t, caf::exit_reason::user_shutdown);
  for (const auto& a : self->state.agents)
    self->send_exit(a, caf::exit_reason::user_shutdown);
  self->quit();
}

void finish(supervisor_pointer self) {
  auto& st = self->state;
  if (st.finishing)
    return;
  st.finishing = true;
  st.summary.reason = final_reason(st);
  std::vector<event> events;
  for (const auto& lesson : derive_lessons(st.scored, st.history.learnings))
    events.push_back(make_event(event_kind::learning_added, lesson));
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

void team_done(supervisor_pointer self, const std::string& id,
               const std::string& why) {
  auto& st = self->state;
  if (st.active.erase(id) == 0)
    return;
  st.team_reasons.push_back(id + ": " + why);
  if (st.active.empty())
    finish(self);
}

void launch(supervisor_pointer self, const std::string& id, size_t index,
            team_history past) {
  auto& st = self->state;
  auto n = std::max<size_t>(st.history.teams.size(), 1);
  auto done = st.history.evaluations;
  auto remaining = st.opts.max_evaluations > done
                     ? st.opts.max_evaluations - done
                     : 0;
  team_options opts;
  opts.id = id;
  opts.strategy = past.spawned.strategy;
  opts.task = st.opts.task;
  opts.run_seed = st.opts.seed;
  opts.evaluation_budget = share(remaining, n, index);
  opts.token_budget = st.opts.token_budget == 0
                        ? std::numeric_limits<uint64_t>::max()
                        : share(st.opts.token_budget, n, index);
  team_links links;
  for (uint32_t a = 0; a < st.opts.agents_per_team; ++a)
    links.agents.push_back(self->spawn(builtin_agent, st.opts.agent));
  st.agents.insert(st.agents.end(), links.agents.begin(), links.agents.end());
  auto device = index % st.links.devices.size();
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

void spawn_new_teams(supervisor_pointer self) {
  auto& st = self->state;
  for (uint32_t i = 0; i < st.opts.teams; ++i) {
    team_history h;
    h.spawned.team = team_id(i);
    h.spawned.strategy = st.opts.strategy;
    for (uint32_t a = 0; a < st.opts.agents_per_team; ++a)
      h.spawned.agents.push_back(h.spawned.team + ".a" + std::to_string(a + 1));
    h.spawned.reason = "initial team " + std::to_string(i + 1) + " of "
                       + std::to_string(st.opts.teams)
                       + ", starting from the task's baseline";
    st.history.teams[h.spawned.team] = h;
    st.strategies[h.spawned.team] = h.spawned.strategy;
    st.active.insert(h.spawned.team);
  }
  size_t index = 0;
  for (const auto& [id, h] : st.history.teams) {
    std::vector<event> events{make_event(event_kind::team_spawned, h.spawned)};
    for (const auto& agent : h.spawned.agents)
      events.push_back(make_event(event_kind::agent_assigned,
                                  agent_assigned{id, agent, "tuner", "builtin"}));
    self
      ->request(st.links.store, caf::infinite, commit_atom_v, std::move(events),
                std::vector<file_write>{team_notes(h.spawned)})
      .then([=, id = id, h = h](uint64_t) { launch(self, id, index, h); },
            [=, id = id](caf::error& err) {
              team_done(self, id, "cannot log team: " + render(err));
            });
    ++index;
  }
}

void resume_teams(supervisor_pointer self) {
  auto& st = self->state;
  size_t index = 0;
  for (const auto& [id, h] : st.history.teams)
    st.active.insert(id);
  for (const auto& [id, h] : st.history.teams)
    launch(self, id, index++, h);
}

/// Logs the restructuring of a team on a plateau, then switches its
/// strategy: "local" teams explore, "explore" and "random" teams climb.
void restructure(supervisor_pointer self, const std::string& id) {
  auto& st = self->state;
  auto& tracker = st.trackers.at(id);
  auto from = st.strategies[id];
  auto to = from == "local" ? std::string{"explore"} : std::string{"local"};
  auto d = tracker.diagnose(id, from, st.opts.task);
  team_restructured x;
  x.team = id;
  x.strategy = to;
  x.parent = d.best_candidate;
  x.diagnosis = wire::to_json_value(d);
  x.reason = "plateau: no improvement in "
             + std::to_string(d.evaluations_since_improvement)
             + " evaluations; strategy " + from + " -> " + to;
  st.restructuring.insert(id);
  self
    ->request(st.links.store, caf::infinite, append_atom_v,
              make_event(event_kind::team_restructured, x))
    .then(
      [=](uint64_t) {
        auto& st = self->state;
        st.restructuring.erase(id);
        st.strategies[id] = to;
        st.trackers.at(id).reset_window();
        if (auto t = st.teams.find(id); t != st.teams.end())
          self->send(t->second, restructure_atom_v, to);
      },
      [=](caf::error&) { self->state.restructuring.erase(id); });
}

void watch_plateau(supervisor_pointer self, const team_progress& p) {
  auto& st = self->state;
  auto i = st.trackers.find(p.team);
  if (i == st.trackers.end())
    i = st.trackers.emplace(p.team, plateau_tracker{st.opts.plateau}).first;
  i->second.add(p.last_candidate, p.last_result);
  if (i->second.on_plateau() && st.restructuring.count(p.team) == 0
      && st.stop_reason.empty() && !st.finishing
      && st.active.count(p.team) > 0)
    restructure(self, p.team);
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

void on_progress(supervisor_pointer self, const team_progress& p) {
  auto& st = self->state;
  auto& s = st.summary;
  const auto& c = p.last_candidate;
  auto ok = p.last_result.status == eval_status::passed;
  st.scored.push_back({c.id, c.family, c.params, p.last_result.status,
                       ok ? p.last_result.geomean_speedup : 0.0});
  s.evaluations += 1;
  s.tokens += p.last_candidate.tokens;
  const auto& r = p.last_result;
  if (r.status == eval_status::passed) {
    s.passed += 1;
    if (r.geomean_speedup > s.best_speedup) {
      s.best_speedup = r.geomean_speedup;
      s.best_candidate = p.last_candidate.id;
      s.best_team = p.team;
      s.best_family = p.last_candidate.family;
      s.best_params = p.last_candidate.params;
      s.best_source = p.last_candidate.source;
      s.best_workloads = r.workloads;
    }
  }
  self->send(st.links.listener, progress_atom_v, p);
  watch_plateau(self, p);
  check_targets(self);
}

void on_stop(supervisor_pointer self, const std::string& why) {
  auto& st = self->state;
  if (!st.stop_reason.empty() || st.finishing)
    return;
  st.stop_reason = why;
  for (const auto& [id, t] : st.teams)
    if (st.active.count(id) > 0)
      self->send(t, stop_atom_v);
}

} // namespace

supervisor_actor::behavior_type supervisor(supervisor_pointer self,
                                           supervisor_options opts,
                                           supervisor_links links,
                                           run_history history) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.links = std::move(links);
  st.summary = summarize(history, "");
  for (const auto& [id, t] : history.teams) {
    st.scored.insert(st.scored.end(), t.scored.begin(), t.scored.end());
    st.strategies[id] = t.spawned.strategy;
    auto& tracker
      = st.trackers.emplace(id, plateau_tracker{st.opts.plateau}).first->second;
    for (const auto& s : t.scored)
      tracker.add(history.candidates.at(s.id), history.results.at(s.id));
  }
  st.history = std::move(history);
  self->set_down_handler([=](caf::down_msg& dm) {
    for (const auto& [id, t] : self->state.teams)
      if (t.address() == dm.source)
        team_done(self, id, "team stopped unexpectedly: " + render(dm.reason));
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
  };
}

} // namespace eat
