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
  }
  return "unknown";
}

} // namespace eat
