// The builtin agent actor: answers each assignment with one candidate made by
// the offline autotuner (builtin_tuner.hpp) from the task's templates, and
// charges a fixed token cost per proposal so that budgets work offline.
// Event-based and cheap: its handler does no blocking work.

#pragma once

#include <cstdint>

#include "actors/agent/builtin_tuner.hpp"
#include "actors/protocol/interfaces.hpp"

namespace eat {

/// Settings of a builtin agent ([agents.builtin] in the configuration).
struct builtin_agent_options {
  tuner_options tuner;
  uint64_t tokens_per_proposal = 1000;
};

/// Makes one candidate for `a`, or fails (agent_failed) when the token budget
/// or the search space is exhausted.
caf::expected<agent_reply> builtin_reply(const assignment& a,
                                         const builtin_agent_options& opts);

/// Behaviour of a builtin agent; spawn with `sys.spawn(builtin_agent, opts)`.
agent_actor::behavior_type builtin_agent(agent_actor::pointer self,
                                         builtin_agent_options opts);

} // namespace eat
