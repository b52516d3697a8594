#include "actors/team.hpp"

#include <algorithm>
#include <cstdio>

#include "actors/artifacts.hpp"
#include "actors/protocol/event_body.hpp"

namespace eat {

uint64_t mix_seed(uint64_t x) {
  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

/// FNV-1a: a string hash that is the same in every build, so that seeds
/// survive a rebuild between a crash and `eat resume`.
uint64_t stable_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s)
    h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

void next(team_pointer self);

void finish(team_pointer self, const std::string& why) {
  auto& st = self->state;
  self->send(st.links.supervisor, done_atom_v, st.opts.id, why);
  if (st.links.make_agent)
    for (const auto& a : st.links.agents) {
      self->unlink_from(a);
      self->send_exit(a, caf::exit_reason::user_shutdown);
    }
  self->quit();
}

/// Makes the agents named in opts.agent_names that the team does not have
/// yet and ends those no longer named.
void staff(team_pointer self) {
  auto& st = self->state;
  if (!st.links.make_agent)
    return;
  std::vector<agent_actor> agents;
  for (const auto& name : st.opts.agent_names) {
    auto known = st.agent_by_name.find(name);
    if (known != st.agent_by_name.end()) {
      agents.push_back(known->second);
      continue;
    }
    auto a = st.links.make_agent(name);
    self->link_to(a);
    st.agent_by_name[name] = a;
    agents.push_back(a);
  }
  for (auto i = st.agent_by_name.begin(); i != st.agent_by_name.end();) {
    if (std::find(st.opts.agent_names.begin(), st.opts.agent_names.end(),
                  i->first)
        == st.opts.agent_names.end()) {
      self->unlink_from(i->second);
      self->send_exit(i->second, caf::exit_reason::user_shutdown);
      i = st.agent_by_name.erase(i);
    } else {
      ++i;
    }
  }
  st.links.agents = std::move(agents);
}

scored_candidate best_scored(const team_history& h) {
  scored_candidate best;
  for (const auto& s : h.scored)
    if (s.status == eval_status::passed && s.speedup > best.speedup)
      best = s;
  return best;
}

void record(team_pointer self, candidate c, eval_result r) {
  auto& st = self->state;
  auto new_best = r.status == eval_status::passed
                  && r.geomean_speedup > st.progress.best_speedup;
  auto files = evaluation_files(c, r, new_best);
  auto e = make_event(event_kind::evaluation_finished, r);
  self
    ->request(st.links.store, caf::infinite, commit_atom_v,
              std::vector<event>{std::move(e)}, std::move(files))
    .then(
      [=](uint64_t) mutable {
        auto& st = self->state;
        auto passed = r.status == eval_status::passed;
        st.history.scored.push_back({c.id, c.family, c.params, r.status,
                                     passed ? r.geomean_speedup : 0.0});
        st.finished_here += 1;
        auto& p = st.progress;
        p.evaluated += 1;
        p.passed += passed ? 1 : 0;
        if (passed && r.geomean_speedup > p.best_speedup) {
          p.best_speedup = r.geomean_speedup;
          p.best_candidate = c.id;
        }
        p.last_candidate = std::move(c);
        p.last_result = std::move(r);
        self->send(st.links.supervisor, progress_atom_v, p);
        next(self);
      },
      [=](caf::error& err) {
        finish(self, "cannot log a result: " + render(err));
      });
}

void run_on_device(team_pointer self, candidate c) {
  auto& st = self->state;
  auto seed = evaluation_seed(st.opts.run_seed, c.id);
  self
    ->request(st.links.device, caf::infinite, evaluate_atom_v, st.opts.task, c,
              seed)
    .then([=](eval_result& r) mutable { record(self, std::move(c), std::move(r)); },
          [=](caf::error& err) {
            finish(self, "device failed: " + render(err));
          });
}

void evaluate(team_pointer self, candidate c) {
  auto& st = self->state;
  auto e = make_event(event_kind::evaluation_started,
    evaluation_started{c.id, st.opts.device_name});
  self->request(st.links.store, caf::infinite, append_atom_v, std::move(e))
    .then([=](uint64_t) mutable { run_on_device(self, std::move(c)); },
          [=](caf::error& err) {
            finish(self, "cannot log an evaluation start: " + render(err));
          });
}

/// Logs the candidate, with the agent's transcript as its artifact, then
/// evaluates it.
void submit(team_pointer self, candidate c, const std::string& transcript) {
  auto& st = self->state;
  st.history.submitted += 1;
  st.progress.tokens = saturating_add(st.progress.tokens, c.tokens);
  c.id = candidate_id(st.opts.id, st.history.submitted);
  auto e = make_event(event_kind::candidate_submitted, c);
  std::vector<file_write> files;
  if (!transcript.empty())
    files.push_back({candidate_dir(c) + "transcript.md", transcript, c.agent});
  self
    ->request(st.links.store, caf::infinite, commit_atom_v,
              std::vector<event>{std::move(e)}, std::move(files))
    .then([=](uint64_t) mutable { evaluate(self, std::move(c)); },
          [=](caf::error& err) {
            finish(self, "cannot log a candidate: " + render(err));
          });
}

/// Submits a template configuration unless another team of the run
/// submitted it first; then asks an agent again, whose assignment lists
/// that team's candidate in `elsewhere` (the supervisor's notice arrives
/// before its answer). The rejected proposal is not logged or charged.
void claim(team_pointer self, candidate c, std::string transcript) {
  auto& st = self->state;
  scored_candidate s{candidate_id(st.opts.id, st.history.submitted + 1),
                     c.family, c.params, eval_status::pending, 0.0};
  self
    ->request(st.links.supervisor, caf::infinite, tried_atom_v, st.opts.id,
              std::move(s))
    .then(
      [=](bool fresh) mutable {
        auto& st = self->state;
        if (fresh || ++st.collisions_in_row >= max_collisions_in_row) {
          st.collisions_in_row = 0;
          return submit(self, std::move(c), transcript);
        }
        next(self);
      },
      [=](caf::error& err) {
        finish(self, "cannot announce a candidate: " + render(err));
      });
}

assignment make_assignment(team_state& st, const std::string& agent) {
  assignment a;
  a.team = st.opts.id;
  a.agent = agent;
  a.role = "tuner";
  a.strategy = st.opts.strategy;
  a.task = st.opts.task;
  a.parent = best_scored(st.history);
  if (st.opts.parent.status == eval_status::passed
      && st.opts.parent.speedup > a.parent.speedup)
    a.parent = st.opts.parent;
  a.history = st.history.scored;
  a.elsewhere = st.opts.elsewhere;
  a.token_budget = st.opts.token_budget > st.progress.tokens
                     ? st.opts.token_budget - st.progress.tokens
                     : 0;
  a.seed = mix_seed(st.opts.run_seed ^ mix_seed(stable_hash(st.opts.id))
               ^ mix_seed(st.history.submitted));
  return a;
}

/// Logs an assignment that ended without a candidate (its tokens count),
/// then asks the next agent, unless the agents failed max_failed_in_row
/// times in a row or this one is over its token budget: then the team is
/// done.
void proposed_nothing(
  team_pointer self, const std::string& agent, agent_reply reply) {
  auto& st = self->state;
  st.progress.tokens = saturating_add(st.progress.tokens, reply.tokens);
  auto failure = reply.failure.substr(0, 4096);
  auto why = "agent " + agent + " proposed nothing"
             + (failure.empty() ? std::string{} : ": " + failure);
  auto in_row = ++st.failed_in_row;
  bool over_budget = failure.rfind("over token budget", 0) == 0;
  // What the agent did goes with it, as a candidate's transcript does.
  char name[32];
  std::snprintf(name, sizeof(name), "%04llu.md",
    static_cast<unsigned long long>(++st.history.failed_proposals));
  std::vector<file_write> files{{"/teams/" + st.opts.id + "/failed/" + name,
    "# " + why + "\n\n" + reply.transcript, agent}};
  proposal_failed body{
    st.opts.id, agent, std::move(failure), reply.tokens, reply.usage};
  self
    ->request(st.links.store, caf::infinite, commit_atom_v,
      std::vector<event>{
        make_event(event_kind::proposal_failed, std::move(body))},
      std::move(files))
    .then(
      [=](uint64_t) {
        auto& st = self->state;
        auto last = over_budget || in_row >= max_failed_in_row;
        auto report = st.progress;
        report.last_candidate = {};
        report.last_result = {};
        report.last_result.detail
          = why
            + (last ? ""
                    : " (" + std::to_string(in_row) + " of "
                        + std::to_string(max_failed_in_row)
                        + " in a row; asking again)");
        self->send(st.links.supervisor, progress_atom_v, report);
        if (over_budget)
          return finish(self, why);
        if (last)
          return finish(self, why + " (" + std::to_string(in_row)
                                + " proposals in a row failed)");
        next(self);
      },
      [=](caf::error& err) {
        finish(self, "cannot log a failed proposal: " + render(err));
      });
}

void ask_agent(team_pointer self) {
  auto& st = self->state;
  if (st.links.agents.empty())
    return finish(self, "the team has no agents");
  auto index = st.next_agent++ % st.links.agents.size();
  auto name = index < st.opts.agent_names.size()
                ? st.opts.agent_names[index]
                : st.opts.id + ".a" + std::to_string(index + 1);
  self
    ->request(st.links.agents[index], caf::infinite, propose_atom_v,
              make_assignment(st, name))
    .then(
      [=](agent_reply& reply) {
        if (reply.candidates.empty())
          return proposed_nothing(self, name, std::move(reply));
        self->state.failed_in_row = 0;
        // One candidate per assignment for now; more come with team roles.
        auto c = std::move(reply.candidates.front());
        c.team = self->state.opts.id;
        c.agent = name;
        c.tokens = reply.tokens;
        c.usage = reply.usage;
        auto transcript = reply.transcript;
        if (!reply.failure.empty())
          transcript += "\n\n" + reply.failure + "\n";
        if (c.params.empty()) // agents' own code: nothing to collide with
          return submit(self, std::move(c), transcript);
        claim(self, std::move(c), std::move(transcript));
      },
      [=](caf::error& err) {
        if (err == caf::sec::request_receiver_down)
          return finish(self, std::string{crashed_agent_prefix} + name);
        finish(self, render(err));
      });
}

void next(team_pointer self) {
  auto& st = self->state;
  if (st.stopping)
    return finish(self, "stopped");
  if (st.progress.evaluated >= st.limit)
    return finish(self, "evaluation budget spent");
  if (!st.history.unfinished.empty()) {
    auto c = std::move(st.history.unfinished.front());
    st.history.unfinished.erase(st.history.unfinished.begin());
    return evaluate(self, std::move(c));
  }
  ask_agent(self);
}

} // namespace

uint64_t evaluation_seed(uint64_t run_seed, const std::string& id) {
  return mix_seed(run_seed ^ mix_seed(stable_hash(id)));
}

std::string candidate_id(const std::string& team, uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-c%04llu",
                static_cast<unsigned long long>(n));
  return team + buf;
}

team_actor::behavior_type team(team_pointer self, team_options opts,
                               team_links links, team_history past) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.links = std::move(links);
  st.history = std::move(past);
  st.progress.team = st.opts.id;
  st.progress.tokens = st.history.tokens;
  st.progress.evaluated = st.history.scored.size();
  for (const auto& s : st.history.scored)
    st.progress.passed += s.status == eval_status::passed ? 1 : 0;
  st.limit = st.progress.evaluated + st.opts.evaluation_budget;
  staff(self);
  auto best = best_scored(st.history);
  st.progress.best_candidate = best.id;
  st.progress.best_speedup = best.speedup;
  return {
    [=](start_atom) {
      if (!self->state.started) {
        self->state.started = true;
        next(self);
      }
    },
    [=](stop_atom) { self->state.stopping = true; },
    [=](restructure_atom, const team_change& x) {
      auto& st = self->state;
      if (!x.strategy.empty())
        st.opts.strategy = x.strategy;
      if (!x.parent.id.empty())
        st.opts.parent = x.parent;
      if (x.evaluations > 0)
        st.limit = x.evaluations;
      if (x.tokens > 0)
        st.opts.token_budget = st.progress.tokens + x.tokens;
      if (!x.agents.empty()) {
        st.opts.agent_names = x.agents;
        staff(self);
      }
    },
    [=](tried_atom, const scored_candidate& s) {
      self->state.opts.elsewhere.push_back(s);
    },
    [=](status_atom) { return self->state.progress; },
  };
}

} // namespace eat
