// What a team asks of an agent, and what the agent gives back. Cross machines
// (an external worker agent speaks these over the wire).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/describe.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// One unit of work for an agent.
struct assignment {
  std::string team;
  std::string agent;
  /// Role within the team, e.g. "explorer".
  std::string role;
  /// Search strategy, e.g. "local" or "explore" (see docs/agents.md).
  std::string strategy;
  task_spec task;
  /// The candidate to improve on; its id is empty when starting fresh.
  scored_candidate parent;
  /// The learning document (markdown).
  std::string learning;
  /// The team's evaluated candidates, oldest first.
  std::vector<scored_candidate> history;
  /// Candidates the run's other teams submitted, oldest first, with the
  /// status and speedup known when the team heard of them (pending for
  /// those announced at submission): what the whole run has tried, so that
  /// a team does not spend an evaluation on a configuration another team
  /// has measured or is measuring (the builtin tuner skips them).
  std::vector<scored_candidate> elsewhere;
  /// Tokens the agent may still spend.
  uint64_t token_budget = 0;
  /// Seed for this assignment (agents are deterministic given their seed).
  uint64_t seed = 0;
};
EAT_DESCRIBE(assignment, team, agent, role, strategy, task, parent, learning,
             history, elsewhere, token_budget, seed)

/// An agent's answer to an assignment.
struct agent_reply {
  /// Proposed candidates (ids are assigned by the team).
  std::vector<candidate> candidates;
  /// Tokens spent on the whole assignment (total_tokens(usage) for LLM
  /// agents; a fixed charge per proposal for the builtin agent).
  uint64_t tokens = 0;
  /// What the agent did, for the team's artifacts.
  std::string transcript;
  /// The breakdown of `tokens`, and the cost.
  token_usage usage;
  /// Why the agent's work is absent or incomplete ("" when it is neither):
  /// e.g. "timed out after 600 s", "rate limited (429) after 5 attempts",
  /// or "over token budget" (then the partial kernel is the candidate).
  std::string failure;
};
EAT_DESCRIBE(agent_reply, candidates, tokens, transcript, usage, failure)

} // namespace eat
