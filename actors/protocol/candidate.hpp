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

/// a + b, or the largest count where that would wrap: a provider (or a
/// CLI) reporting 2^64 - 1 tokens wrapped the sum past the budget.
inline uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/// A token count reported as a JSON number `x`: none when not positive
/// (or NaN), the largest count when beyond it.
inline uint64_t token_count(double x) {
  if (!(x > 0))
    return 0;
  return x >= 18446744073709551615.0 ? UINT64_MAX : static_cast<uint64_t>(x);
}

/// Sum of the five counts of `u`.
inline uint64_t total_tokens(const token_usage& u) {
  return saturating_add(saturating_add(saturating_add(u.input, u.cache_read),
                          saturating_add(u.cache_write, u.output)),
    u.reasoning);
}

/// Adds `x` to `sum`, count by count.
inline void add_usage(token_usage& sum, const token_usage& x) {
  sum.input = saturating_add(sum.input, x.input);
  sum.cache_read = saturating_add(sum.cache_read, x.cache_read);
  sum.cache_write = saturating_add(sum.cache_write, x.cache_write);
  sum.output = saturating_add(sum.output, x.output);
  sum.reasoning = saturating_add(sum.reasoning, x.reasoning);
  sum.cost_usd += x.cost_usd;
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
