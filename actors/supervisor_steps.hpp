// Steps of the supervisor shared by its source files (actors/supervisor.cpp:
// the run's life; actors/supervisor_plans.cpp: restructuring and budgets).
// Internal to the supervisor; every function runs in the supervisor's
// handlers.

#pragma once

#include <string>
#include <vector>

#include "actors/protocol/event_body.hpp"
#include "actors/supervisor.hpp"

namespace eat {

/// "t<n>".
std::string team_id(uint32_t n);

/// Spawns team `id` from its record and `past`, and starts it.
void launch(supervisor_pointer self, const std::string& id, team_history past);

/// A team has stopped working.
void team_done(supervisor_pointer self, std::string id, std::string why);

/// The teams that take part in budgets and plans: active and not ending.
std::vector<std::string> working_teams(const supervisor_state& st);

/// Recomputes every working team's limits from the budgets left, returning
/// the budget_changed events to log; apply_budgets then tells the teams.
/// Unless `idle` (no team has an evaluation in flight: at the start), each
/// team keeps one evaluation for the one it may have in flight.
std::vector<event> resplit(supervisor_state& st, const std::string& reason,
                           bool idle = false);

/// Sends every working team its current limits.
void apply_budgets(supervisor_pointer self);

/// Decides and carries out the restructuring of team `id` (or of the whole
/// run when `id` is "run").
void restructure(supervisor_pointer self, const std::string& id);

/// Adds a lesson to the learning document when a restructuring paid off.
void judge_outcomes(supervisor_pointer self, const team_progress& p);

/// Restarts a crashed team from the log, or retires it after too many
/// crashes.
void restart_team(supervisor_pointer self, std::string id, std::string why);

} // namespace eat
