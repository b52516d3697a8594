#include "actors/protocol/event.hpp"

namespace eat {

std::string to_string(event_kind x) {
  switch (x) {
    case event_kind::run_started: return "run_started";
    case event_kind::team_spawned: return "team_spawned";
    case event_kind::candidate_submitted: return "candidate_submitted";
    case event_kind::evaluation_finished: return "evaluation_finished";
    case event_kind::run_finished: return "run_finished";
    case event_kind::run_resumed: return "run_resumed";
    case event_kind::evaluation_started: return "evaluation_started";
    case event_kind::team_dissolved: return "team_dissolved";
    case event_kind::team_split: return "team_split";
    case event_kind::team_merged: return "team_merged";
    case event_kind::team_restructured: return "team_restructured";
    case event_kind::agent_assigned: return "agent_assigned";
    case event_kind::budget_changed: return "budget_changed";
    case event_kind::learning_added: return "learning_added";
    case event_kind::node_joined: return "node_joined";
    case event_kind::node_lost: return "node_lost";
    case event_kind::operator_action: return "operator_action";
    case event_kind::proposal_failed: return "proposal_failed";
    case event_kind::agent_evaluated: return "agent_evaluated";
  }
  return "unknown";
}

} // namespace eat
