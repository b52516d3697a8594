#include "runtime/event_summary.hpp"

#include <cstdio>
#include <string_view>

#include "actors/protocol/progress.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/learning.hpp"
#include "runtime/printable.hpp"
#include "runtime/report.hpp"

namespace eat {

namespace {

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ",") + x;
  return out;
}

/// Decodes the body as T and describes it with f.
template <class T, class F>
std::string with(const event& e, F f) {
  auto x = wire::decode<T>(e.body);
  if (!x)
    return "(undecodable body: " + render(x.error()) + ")";
  return f(*x);
}

std::string details(const event& e) {
  switch (e.kind) {
    case event_kind::run_started:
      return with<run_started>(e, [](const auto& x) {
        return x.run_id + " task " + x.task + " seed " + std::to_string(x.seed)
               + ", " + std::to_string(x.max_evaluations) + " evaluations";
      });
    case event_kind::team_spawned:
      return with<team_spawned>(e, [](const auto& x) {
        return x.team + " (" + x.strategy + ", " + join(x.agents)
               + "): " + x.reason;
      });
    case event_kind::candidate_submitted:
      return with<candidate>(e, [](const auto& x) {
        auto out = x.id + " by " + x.agent + ": " + x.family;
        for (const auto& [k, v] : x.params)
          out += " " + k + "=" + v;
        return out;
      });
    case event_kind::evaluation_started:
      return with<evaluation_started>(e, [](const auto& x) {
        return x.candidate + " on " + x.device;
      });
    case event_kind::evaluation_finished:
      return with<eval_result>(e, [](const auto& x) {
        return x.candidate + " " + to_string(x.status)
               + (x.status == eval_status::passed
                    ? " " + fixed(x.geomean_speedup) + "x"
                    : ": " + x.detail.substr(0, x.detail.find('\n')));
      });
    case event_kind::run_finished:
      return with<run_summary>(e, [](const auto& x) {
        return x.reason
               + (x.best_candidate.empty()
                    ? std::string{"; no candidate passed"}
                    : "; best " + fixed(x.best_speedup) + "x ("
                        + x.best_candidate + ")");
      });
    case event_kind::run_resumed:
      return with<run_resumed>(e, [](const auto& x) {
        return "after event " + std::to_string(x.last_seq) + ", "
               + std::to_string(x.unfinished) + " unfinished";
      });
    case event_kind::agent_assigned:
      return with<agent_assigned>(e, [](const auto& x) {
        return x.agent + " -> " + x.team + " as " + x.role + " (" + x.backend
               + ")";
      });
    case event_kind::learning_added:
      return with<learning_entry>(e, [](const auto& x) {
        return x.id + ": " + x.text;
      });
    case event_kind::team_dissolved:
      return with<team_dissolved>(
        e, [](const auto& x) { return x.team + ": " + x.reason; });
    case event_kind::team_split:
      return with<team_split>(e, [](const auto& x) {
        return x.team + " -> " + join(x.into) + ": " + x.reason;
      });
    case event_kind::team_merged:
      return with<team_merged>(e, [](const auto& x) {
        return join(x.teams) + " -> " + x.into + ": " + x.reason;
      });
    case event_kind::team_restructured:
      return with<team_restructured>(
        e, [](const auto& x) { return x.team + ": " + x.reason; });
    case event_kind::budget_changed:
      return with<budget_changed>(e, [](const auto& x) {
        return x.scope + ": " + std::to_string(x.evaluations)
               + " evaluations, " + std::to_string(x.tokens) + " tokens";
      });
    case event_kind::node_joined:
      return with<node_joined>(
        e, [](const auto& x) { return x.node + " at " + x.address; });
    case event_kind::node_lost:
      return with<node_lost>(
        e, [](const auto& x) { return x.node + ": " + x.reason; });
    case event_kind::operator_action:
      return with<operator_action>(e, [](const auto& x) {
        return x.who + ": " + x.action + " " + x.detail;
      });
    case event_kind::proposal_failed:
      return with<proposal_failed>(e, [](const auto& x) {
        return x.agent + " (" + x.team + ", " + std::to_string(x.tokens)
               + " tokens): " + x.failure.substr(0, x.failure.find('\n'));
      });
    case event_kind::agent_evaluated:
      return with<agent_evaluated>(e, [](const auto& x) {
        const auto& r = x.result;
        return x.agent + " (" + x.team + ") ./eval " + r.candidate + ": "
               + to_string(r.status)
               + (r.status == eval_status::passed
                    ? " " + fixed(r.geomean_speedup) + "x"
                    : ": " + r.detail.substr(0, r.detail.find('\n')));
      });
  }
  return "";
}

} // namespace

std::string event_summary(const event& e) {
  return std::to_string(e.seq) + "  " + format_utc(e.unix_ms) + "  "
         + to_string(e.kind) + "  " + printable(details(e));
}

} // namespace eat
