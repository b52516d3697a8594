// The builtin agent's search: an offline autotuner over a task's template
// families, deterministic for a given seed and history. The builtin agent
// actor (builtin_agent.hpp) wraps it; docs/agents.md describes the strategies.
// Pure functions; any thread.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/agent/constraints.hpp"
#include "actors/protocol/candidate.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// How the tuner searches.
struct tuner_options {
  /// "local": explore, then hill-climb around the best (at once around a
  /// parent handed over from another team); "explore": prefer configurations
  /// far from everything tried; "random": uniform sampling; "crossover":
  /// combine the two best configurations of a family, else climb. A suffix
  /// ":<family>" restricts the search to one template family.
  std::string strategy = "local";
  /// Passed candidates to collect by random sampling before "local" climbs.
  uint32_t explore_rounds = 6;
  /// The compile targets of the devices that may evaluate the proposals
  /// (device_caps::target): no configuration that violates a family's
  /// declared constraints on one of them is proposed. A constraint naming a
  /// fact that a target lacks is not applied to that target.
  std::vector<target_facts> targets;
};

/// A configuration to try next, and why.
struct proposal {
  std::string family;
  param_map params;
  /// Candidate whose neighbourhood this comes from; empty for a fresh sample.
  std::string parent;
  std::string reason;
};

/// Proposes a configuration that is neither in `history` (the team's own
/// evaluations, which steer the search) nor in `elsewhere` (what the run's
/// other teams submitted: skipped, and kept away from by "explore"), and
/// that meets its family's constraints on every one of `opts.targets`. Fails
/// (agent_failed) when the task has no templates or every configuration
/// has been tried.
caf::expected<proposal> propose(const task_spec& task,
                                const std::vector<scored_candidate>& history,
                                const scored_candidate& parent,
                                const tuner_options& opts, uint64_t seed,
                                const std::vector<scored_candidate>& elsewhere
                                = {});

/// Distance between two configurations of one family: the sum over
/// parameters of |index difference| / (choices - 1); +infinity across
/// families.
double param_distance(const template_family& family, const param_map& a,
                      const param_map& b);

} // namespace eat
