// parse_plan and check_plan (actors/policy.hpp): reading and validating the
// llm policy's JSON plan.

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "actors/policy.hpp"
#include "actors/protocol/error.hpp"

namespace eat {

namespace {

using json = nlohmann::json;

const std::set<std::string>& known_ops() {
  static const std::set<std::string> ops{
    "spawn",        "dissolve",   "split",      "merge",
    "move_agent",   "set_strategy", "set_parent", "set_weight"};
  return ops;
}

bool valid_strategy(const std::string& s, const run_snapshot& run) {
  auto colon = s.find(':');
  auto base = s.substr(0, colon);
  const auto& known = known_strategies();
  if (std::find(known.begin(), known.end(), base) == known.end())
    return false;
  if (colon == std::string::npos)
    return true;
  auto family = s.substr(colon + 1);
  return std::find(run.families.begin(), run.families.end(), family)
         != run.families.end();
}

bool valid_parent(const std::string& p, const run_snapshot& run) {
  if (p == "baseline")
    return true;
  if (p == "best")
    return !run.best_candidate.empty();
  if (p.rfind("team:", 0) == 0) {
    const auto* t = find_team(run, p.substr(5));
    return t != nullptr && !t->best_candidate.empty();
  }
  return std::find(run.passed_candidates.begin(), run.passed_candidates.end(),
                   p)
         != run.passed_candidates.end();
}

/// Problems of one operation, each prefixed with "operations[i]".
void check_operation(const team_operation& x, const std::string& where,
                     const run_snapshot& run, std::vector<std::string>& out) {
  auto fail = [&](const std::string& what) { out.push_back(where + ": " + what); };
  if (known_ops().count(x.op) == 0)
    return fail("unknown op \"" + x.op + "\"");
  if (x.reason.empty())
    fail("missing reason");
  for (const auto& t : x.teams)
    if (find_team(run, t) == nullptr)
      fail("team " + t + " is not an active team");
  auto teams_needed = [&](size_t lo, size_t hi) {
    if (x.teams.size() < lo || x.teams.size() > hi)
      fail(x.op + " takes " + std::to_string(lo)
           + (hi == lo ? "" : (hi > 64 ? " or more" : " to " + std::to_string(hi)))
           + " team(s), got " + std::to_string(x.teams.size()));
  };
  auto strategy_needed = [&](const std::string& s) {
    if (!valid_strategy(s, run))
      fail("unknown strategy \"" + s + "\"");
  };
  auto parent_needed = [&](const std::string& p) {
    if (!valid_parent(p, run))
      fail("parent \"" + p + "\" is not best, baseline, team:ID of a team "
           "with a best, or a passed candidate");
  };
  if (x.op == "spawn") {
    teams_needed(0, 0);
    strategy_needed(x.strategy);
    parent_needed(x.parent);
    if (x.agents < 1 || x.agents > 8)
      fail("agents must be 1 to 8, got " + std::to_string(x.agents));
  } else if (x.op == "dissolve") {
    teams_needed(1, 1);
  } else if (x.op == "split") {
    teams_needed(1, 1);
    if (x.strategies.size() != 2)
      fail("split takes two strategies");
    for (const auto& s : x.strategies)
      strategy_needed(s);
    if (const auto* t = x.teams.empty() ? nullptr : find_team(run, x.teams[0]))
      if (t->agents.size() < 2)
        fail("team " + t->id + " has one agent and cannot split");
  } else if (x.op == "merge") {
    teams_needed(2, 1000);
    std::set<std::string> distinct(x.teams.begin(), x.teams.end());
    if (distinct.size() != x.teams.size())
      fail("merge names a team twice");
    strategy_needed(x.strategy);
    parent_needed(x.parent);
  } else if (x.op == "move_agent") {
    teams_needed(2, 2);
    if (x.teams.size() == 2) {
      const auto* from = find_team(run, x.teams[0]);
      if (from != nullptr) {
        if (std::find(from->agents.begin(), from->agents.end(), x.agent)
            == from->agents.end())
          fail("agent \"" + x.agent + "\" is not in team " + from->id);
        else if (from->agents.size() < 2)
          fail("team " + from->id + " would have no agent left");
      }
      if (x.teams[0] == x.teams[1])
        fail("move_agent needs two different teams");
    }
  } else if (x.op == "set_strategy") {
    teams_needed(1, 1);
    strategy_needed(x.strategy);
  } else if (x.op == "set_parent") {
    teams_needed(1, 1);
    parent_needed(x.parent);
  } else if (x.op == "set_weight") {
    teams_needed(1, 1);
    if (!(x.weight > 0 && x.weight <= 100))
      fail("weight must be in (0, 100]");
  }
}

/// Reads a string field, recording a wrong type.
std::string text_field(const json& j, const char* key, const std::string& where,
                       std::vector<std::string>& out) {
  if (!j.contains(key) || j[key].is_null())
    return {};
  if (!j[key].is_string()) {
    out.push_back(where + "." + key + ": expected a string");
    return {};
  }
  return j[key].get<std::string>();
}

std::vector<std::string> text_list(const json& j, const char* key,
                                   const std::string& where,
                                   std::vector<std::string>& out) {
  std::vector<std::string> result;
  if (!j.contains(key))
    return result;
  if (!j[key].is_array()) {
    out.push_back(where + "." + key + ": expected an array of strings");
    return result;
  }
  for (const auto& x : j[key])
    if (x.is_string())
      result.push_back(x.get<std::string>());
    else
      out.push_back(where + "." + key + ": expected an array of strings");
  return result;
}

team_operation read_operation(const json& j, const std::string& where,
                              std::vector<std::string>& out) {
  team_operation x;
  if (!j.is_object()) {
    out.push_back(where + ": expected an object");
    return x;
  }
  x.op = text_field(j, "op", where, out);
  x.teams = text_list(j, "teams", where, out);
  if (j.contains("team") && x.teams.empty())
    x.teams.push_back(text_field(j, "team", where, out));
  x.strategy = text_field(j, "strategy", where, out);
  x.strategies = text_list(j, "strategies", where, out);
  x.parent = text_field(j, "parent", where, out);
  x.agent = text_field(j, "agent", where, out);
  x.reason = text_field(j, "reason", where, out);
  if (j.contains("agents")) {
    if (j["agents"].is_number_unsigned() && j["agents"].get<uint64_t>() <= 64)
      x.agents = j["agents"].get<uint32_t>();
    else
      out.push_back(where + ".agents: expected an integer in [1, 8]");
  }
  if (j.contains("weight")) {
    if (j["weight"].is_number())
      x.weight = j["weight"].get<double>();
    else
      out.push_back(where + ".weight: expected a number");
  }
  return x;
}

} // namespace

std::vector<std::string> check_plan(const restructure_plan& plan,
                                    const run_snapshot& run) {
  std::vector<std::string> out;
  if (plan.operations.empty())
    out.push_back("the plan has no operations");
  for (size_t i = 0; i < plan.operations.size(); ++i)
    check_operation(plan.operations[i],
                    "operations[" + std::to_string(i) + "]", run, out);
  size_t spawned = 0;
  size_t ended = 0;
  for (const auto& x : plan.operations) {
    spawned += x.op == "spawn" || x.op == "merge" ? 1 : x.op == "split" ? 2 : 0;
    ended += x.op == "dissolve" || x.op == "split" ? 1
             : x.op == "merge"                     ? x.teams.size()
                                                   : 0;
  }
  if (run.teams.size() + spawned > run.max_teams + ended)
    out.push_back("the plan leaves more than " + std::to_string(run.max_teams)
                  + " teams");
  if (run.teams.size() + spawned <= ended)
    out.push_back("the plan leaves no team");
  return out;
}

caf::expected<restructure_plan> parse_plan(const std::string& answer,
                                           const run_snapshot& run) {
  auto open = answer.find('{');
  auto close = answer.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return make_error(error::invalid_plan, "the answer holds no JSON object");
  json j = json::parse(answer.substr(open, close - open + 1), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(error::invalid_plan, "the answer's JSON does not parse");
  std::vector<std::string> problems;
  restructure_plan plan;
  plan.policy = "llm";
  plan.rationale = text_field(j, "rationale", "plan", problems);
  if (!j.contains("operations") || !j["operations"].is_array())
    problems.push_back("plan.operations: expected an array");
  else
    for (size_t i = 0; i < j["operations"].size(); ++i)
      plan.operations.push_back(read_operation(
        j["operations"][i], "operations[" + std::to_string(i) + "]", problems));
  if (problems.empty())
    problems = check_plan(plan, run);
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems)
      text += (text.empty() ? "" : "; ") + p;
    return make_error(error::invalid_plan, text);
  }
  return plan;
}

} // namespace eat
