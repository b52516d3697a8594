// A candidate kernel proposed by an agent, and the compact record of a scored
// candidate that agents get back as history. Both cross machines.

#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "actors/protocol/describe.hpp"
#include "actors/protocol/result.hpp"

namespace eat {

/// Template parameter choices by parameter name, e.g. {"tile_m": "64"}.
using param_map = std::map<std::string, std::string>;

/// Tokens an agent spent, normalised across providers (docs/agents.md):
/// `input` excludes cached input, so the five counts add up to the total.
struct token_usage {
  uint64_t input = 0;
  uint64_t cache_read = 0;
  uint64_t cache_write = 0;
  uint64_t output = 0;
  uint64_t reasoning = 0;
  /// Cost in US dollars as reported by the provider (0 when unknown).
  double cost_usd = 0;
};
EAT_DESCRIBE(token_usage, input, cache_read, cache_write, output, reasoning,
             cost_usd)

/// Sum of the five counts of `u`.
inline uint64_t total_tokens(const token_usage& u) {
  return u.input + u.cache_read + u.cache_write + u.output + u.reasoning;
}

/// A kernel proposed by an agent. The device only trusts `source`.
struct candidate {
  /// Run-unique id, e.g. "c000017".
  std::string id;
  /// The team and agent that produced it.
  std::string team;
  std::string agent;
  std::string task;
  /// Template family, "baseline" for the task's baseline, or "custom".
  std::string family;
  param_map params;
  /// Candidate id this one was derived from; empty for none.
  std::string parent;
  /// The full kernel source.
  std::string source;
  /// Tokens spent producing it (builtin agents charge a fixed cost).
  uint64_t tokens = 0;
  /// The breakdown of `tokens` and the cost, as the agent reported them.
  token_usage usage;
};
EAT_DESCRIBE(candidate, id, team, agent, task, family, params, parent, source,
             tokens, usage)

/// What an agent learns about an earlier candidate.
struct scored_candidate {
  std::string id;
  std::string family;
  param_map params;
  eval_status status = eval_status::pending;
  /// Geometric-mean speedup over the baseline; 0 unless passed.
  double speedup = 0;
};
EAT_DESCRIBE(scored_candidate, id, family, params, status, speedup)

} // namespace eat
