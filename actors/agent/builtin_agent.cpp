#include "actors/agent/builtin_agent.hpp"

#include "actors/agent/render.hpp"
#include "actors/protocol/error.hpp"

namespace eat {

caf::expected<agent_reply> builtin_reply(const assignment& a,
                                         const builtin_agent_options& opts) {
  if (a.token_budget < opts.tokens_per_proposal)
    return make_error(error::agent_failed,
                      "token budget exhausted: " + std::to_string(a.token_budget)
                        + " left, a proposal costs "
                        + std::to_string(opts.tokens_per_proposal));
  // The team's current strategy wins over the configured default, so that
  // the supervisor's restructuring reaches the search.
  auto tuner = opts.tuner;
  if (!a.strategy.empty())
    tuner.strategy = a.strategy;
  auto next = propose(a.task, a.history, a.parent, tuner, a.seed, a.elsewhere);
  if (!next)
    return next.error();
  const template_family* family = nullptr;
  for (const auto& f : a.task.families)
    if (f.name == next->family)
      family = &f;
  auto source = render_template(*family, next->params);
  if (!source)
    return source.error();
  candidate c;
  c.team = a.team;
  c.agent = a.agent;
  c.task = a.task.name;
  c.family = next->family;
  c.params = next->params;
  c.parent = next->parent;
  c.source = std::move(*source);
  c.tokens = opts.tokens_per_proposal;
  agent_reply reply;
  reply.tokens = c.tokens;
  reply.transcript = a.agent + " (" + a.strategy + "): " + next->reason;
  reply.candidates.push_back(std::move(c));
  return reply;
}

agent_actor::behavior_type builtin_agent(agent_actor::pointer,
                                         builtin_agent_options opts) {
  return {
    [opts](propose_atom, const assignment& a) -> caf::result<agent_reply> {
      auto reply = builtin_reply(a, opts);
      if (!reply)
        return reply.error();
      return std::move(*reply);
    },
  };
}

} // namespace eat
