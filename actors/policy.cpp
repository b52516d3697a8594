#include "actors/policy.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "actors/protocol/error.hpp"
#include "actors/protocol/json.hpp"

namespace eat {

namespace {

using json = nlohmann::json;

/// Failures above this share of a window send a team back to the best.
constexpr double failing_share = 0.5;

/// Mean parameter distance under which a window counts as converged.
constexpr double converged_distance = 0.25;

/// Restructurings after which a team that still does not improve is
/// replaced.
constexpr uint32_t max_restructures = 3;

std::string base_strategy(const std::string& s) {
  return s.substr(0, s.find(':'));
}

team_operation op(std::string name, std::vector<std::string> teams,
                  std::string reason) {
  team_operation x;
  x.op = std::move(name);
  x.teams = std::move(teams);
  x.reason = std::move(reason);
  return x;
}

team_operation set_strategy(const std::string& team, std::string strategy,
                            std::string reason) {
  auto x = op("set_strategy", {team}, std::move(reason));
  x.strategy = std::move(strategy);
  return x;
}

team_operation set_parent(const std::string& team, std::string parent,
                          std::string reason) {
  auto x = op("set_parent", {team}, std::move(reason));
  x.parent = std::move(parent);
  return x;
}

team_operation spawn(std::string strategy, std::string parent, uint32_t agents,
                     std::string reason) {
  auto x = op("spawn", {}, std::move(reason));
  x.strategy = std::move(strategy);
  x.parent = std::move(parent);
  x.agents = agents;
  return x;
}

/// A family the team has not tried, else the one it did worst in; "" when
/// the task has a single family.
std::string other_family(const run_snapshot& run, const plateau_diagnosis& d,
                         uint64_t seed) {
  if (run.families.size() < 2)
    return {};
  std::vector<std::string> untried;
  for (const auto& f : run.families)
    if (d.families_tried.count(f) == 0)
      untried.push_back(f);
  if (!untried.empty())
    return untried[seed % untried.size()];
  std::string worst;
  double worst_speedup = 0;
  for (const auto& [f, s] : d.families_tried)
    if (worst.empty() || s < worst_speedup) {
      worst = f;
      worst_speedup = s;
    }
  return worst;
}

uint64_t failures(const plateau_diagnosis& d) {
  uint64_t n = 0;
  for (const auto& [status, count] : d.failure_mix)
    n += status == "passed" ? 0 : count;
  return n;
}

uint64_t window_size(const plateau_diagnosis& d) {
  uint64_t n = 0;
  for (const auto& [status, count] : d.failure_mix)
    n += count;
  return n;
}

/// The plan for a team that holds (or ties) the run's best.
void plan_for_leader(const run_snapshot& run, const team_snapshot& t,
                     const plateau_diagnosis& d, uint64_t seed,
                     restructure_plan& out) {
  auto strategy = base_strategy(t.strategy);
  auto converged = d.similarity_distance < converged_distance;
  if (strategy == "explore" || strategy == "random") {
    out.operations.push_back(set_strategy(
      t.id, "local",
      "exploring found nothing better than " + speedup_text(t.best_speedup)
        + "; climb around the best again"));
    return;
  }
  if (!converged) {
    auto distance = speedup_text(d.similarity_distance).substr(0, 4);
    out.operations.push_back(
      strategy == "local"
        ? set_strategy(t.id, "crossover",
                       "its recent candidates are spread out (distance "
                         + distance
                         + "): combine the best ones instead of single steps")
        : set_strategy(t.id, "local",
                       "recombining found nothing better than "
                         + speedup_text(t.best_speedup)
                         + ": climb around the best again"));
    return;
  }
  if (t.agents.size() >= 2) {
    auto x = op("split", {t.id},
                "converged around " + d.best_candidate
                  + ": half the agents keep climbing, half explore");
    x.strategies = {"local", "explore"};
    out.operations.push_back(std::move(x));
    return;
  }
  if (run.teams.size() < run.max_teams) {
    auto family = other_family(run, d, seed);
    auto strategy_new = family.empty() ? "explore" : "local:" + family;
    out.operations.push_back(spawn(
      strategy_new, "baseline", 1,
      "team " + t.id + " converged around " + d.best_candidate + " ("
        + speedup_text(t.best_speedup) + "); a new team searches "
        + (family.empty() ? "far from it" : "the " + family + " family")));
    out.operations.push_back(set_strategy(
      t.id, "crossover", "converged: recombine its best configurations"));
    return;
  }
  out.operations.push_back(set_strategy(
    t.id, "explore", "converged and no room for a new team: explore"));
}

/// The plan when the whole run stops improving: a fresh team from the
/// baseline, in the family the teams tried least, or a random restart of the
/// weakest team when there is no room for one more.
restructure_plan run_plateau_plan(const run_snapshot& run,
                                  const plateau_diagnosis& d, uint64_t seed) {
  restructure_plan out;
  out.policy = "heuristic";
  out.rationale = "the run has not improved on " + speedup_text(run.best_speedup)
                  + " in " + std::to_string(d.evaluations_since_improvement)
                  + " evaluations";
  if (run.teams.size() < run.max_teams) {
    auto family = other_family(run, d, seed);
    out.operations.push_back(
      spawn(family.empty() ? "random" : "local:" + family, "baseline", 1,
            "no team improves: a fresh team restarts from the baseline"
              + (family.empty() ? std::string{}
                                : " in the " + family + " family")));
    return out;
  }
  const team_snapshot* weakest = nullptr;
  for (const auto& t : run.teams)
    if (weakest == nullptr || t.best_speedup < weakest->best_speedup)
      weakest = &t;
  if (weakest != nullptr)
    out.operations.push_back(set_strategy(
      weakest->id, "random",
      "no team improves and no room for a new one: the weakest team ("
        + speedup_text(weakest->best_speedup) + ") restarts at random"));
  return out;
}

} // namespace

const team_snapshot* find_team(const run_snapshot& run, const std::string& id) {
  for (const auto& t : run.teams)
    if (t.id == id)
      return &t;
  return nullptr;
}

std::string speedup_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", x);
  return buf;
}

const std::vector<std::string>& known_strategies() {
  static const std::vector<std::string> names{"local", "explore", "random",
                                              "crossover"};
  return names;
}

restructure_plan heuristic_plan(const run_snapshot& run,
                                const plateau_diagnosis& d, uint64_t seed) {
  restructure_plan out;
  out.policy = "heuristic";
  if (d.team == "run")
    return run_plateau_plan(run, d, seed);
  const auto* t = find_team(run, d.team);
  if (t == nullptr) {
    out.rationale = "team " + d.team + " is not active";
    return out;
  }
  auto window = window_size(d);
  auto trails = t->id != run.best_team
                && run.best_speedup > t->best_speedup * (1 + run.threshold);
  if (t->restructures >= max_restructures && run.teams.size() > 1) {
    out.operations.push_back(
      op("dissolve", {t->id},
         "restructured " + std::to_string(t->restructures)
           + " times without improving on " + speedup_text(t->best_speedup)));
    out.operations.push_back(
      spawn("explore", "baseline", static_cast<uint32_t>(t->agents.size()),
            "replaces team " + t->id + " with a fresh explorer"));
  } else if (window > 0
             && static_cast<double>(failures(d))
                  > failing_share * static_cast<double>(window)) {
    out.operations.push_back(set_parent(
      t->id, run.best_candidate.empty() ? "baseline" : "best",
      std::to_string(failures(d)) + " of its last " + std::to_string(window)
        + " candidates failed: restart from the run's best"));
    out.operations.push_back(
      set_strategy(t->id, "local", "climb from a kernel that works"));
  } else if (trails && t->restructures >= 1 && run.teams.size() >= 2) {
    auto x = op("merge", {t->id, run.best_team},
                "team " + t->id + " (" + speedup_text(t->best_speedup)
                  + ") still trails team " + run.best_team + " ("
                  + speedup_text(run.best_speedup)
                  + "): pool their agents around the best kernel");
    x.strategy = "crossover";
    x.parent = "best";
    out.operations.push_back(std::move(x));
  } else if (trails) {
    out.operations.push_back(set_parent(
      t->id, "team:" + run.best_team,
      "trails team " + run.best_team + " (" + speedup_text(t->best_speedup)
        + " vs " + speedup_text(run.best_speedup) + "): continue from its best"));
    out.operations.push_back(
      set_strategy(t->id, "local", "climb around the inherited kernel"));
  } else {
    plan_for_leader(run, *t, d, seed, out);
  }
  out.rationale = "team " + t->id + " on a plateau after "
                  + std::to_string(d.evaluations_since_improvement)
                  + " evaluations without improvement";
  return out;
}

std::string plan_prompt(const run_snapshot& run, const plateau_diagnosis& d,
                        const std::string& learning) {
  json teams = json::array();
  for (const auto& t : run.teams)
    teams.push_back(json::parse(wire::to_json_value(t)));
  std::string out;
  out += "You supervise teams of agents that optimise a kernel. A team is on "
         "a plateau; decide how to restructure the teams.\n\n";
  out += "## Diagnosis\n" + wire::to_json_value(d) + "\n\n";
  out += "## Teams (active)\n" + teams.dump(1) + "\n\n";
  out += "Run: best " + run.best_candidate + " of team " + run.best_team
         + " at " + speedup_text(run.best_speedup) + "; "
         + std::to_string(run.evaluations) + " evaluations done, "
         + std::to_string(run.evaluations_left) + " left; at most "
         + std::to_string(run.max_teams) + " teams.\n\n";
  out += "## Learning document\n" + learning + "\n\n";
  out += "## Answer\nReply with one JSON object and nothing else:\n"
         "{\"rationale\": \"...\", \"operations\": [{\"op\": ..., ...}]}\n"
         "Operations (each needs a \"reason\"):\n"
         "- {\"op\":\"spawn\",\"strategy\":S,\"parent\":P,\"agents\":N}\n"
         "- {\"op\":\"dissolve\",\"teams\":[T]}\n"
         "- {\"op\":\"split\",\"teams\":[T],\"strategies\":[S,S]} (T has >= 2 "
         "agents)\n"
         "- {\"op\":\"merge\",\"teams\":[T,U,...],\"strategy\":S,"
         "\"parent\":P}\n"
         "- {\"op\":\"move_agent\",\"teams\":[FROM,TO],\"agent\":A}\n"
         "- {\"op\":\"set_strategy\",\"teams\":[T],\"strategy\":S}\n"
         "- {\"op\":\"set_parent\",\"teams\":[T],\"parent\":P}\n"
         "- {\"op\":\"set_weight\",\"teams\":[T],\"weight\":W} (W > 0)\n"
         "S is one of local, explore, random, crossover, optionally followed "
         "by :FAMILY (families: ";
  for (size_t i = 0; i < run.families.size(); ++i)
    out += (i ? ", " : "") + run.families[i];
  out += "). P is \"best\", \"baseline\", \"team:ID\" or a passed candidate "
         "id. N is 1 to 8.\n";
  return out;
}

} // namespace eat
