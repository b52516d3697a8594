#include "actors/agent/builtin_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

using rng_t = std::mt19937_64;

std::string key_of(const std::string& family, const param_map& params) {
  auto key = family;
  for (const auto& [k, v] : params)
    key += "|" + k + "=" + v;
  return key;
}

size_t index_of(const param_space& p, const std::string& value) {
  auto i = std::find(p.values.begin(), p.values.end(), value);
  return static_cast<size_t>(i - p.values.begin());
}

uint64_t space_size(const task_spec& task) {
  uint64_t total = 0;
  for (const auto& f : task.families) {
    uint64_t n = 1;
    for (const auto& p : f.params)
      n *= p.values.size();
    total += n;
  }
  return total;
}

param_map random_params(const template_family& f, rng_t& rng) {
  param_map out;
  for (const auto& p : f.params) {
    std::uniform_int_distribution<size_t> pick{0, p.values.size() - 1};
    out[p.name] = p.values[pick(rng)];
  }
  return out;
}

const template_family* family_named(const task_spec& task,
                                    const std::string& name) {
  for (const auto& f : task.families)
    if (f.name == name)
      return &f;
  return nullptr;
}

/// True when `params` meets the family's constraints on every target (with
/// none, those that name no fact).
bool admissible(const template_family& f, const param_map& params,
  const std::vector<target_facts>& targets) {
  if (f.constraints.empty())
    return true;
  if (targets.empty())
    return violated_constraint(f, params, {}).empty();
  return std::all_of(targets.begin(), targets.end(), [&](const auto& t) {
    return violated_constraint(f, params, t).empty();
  });
}

/// True when `params` of `f` has not been tried and meets its constraints.
bool proposable(const template_family& f, const param_map& params,
  const std::set<std::string>& tried,
  const std::vector<target_facts>& targets) {
  return tried.count(key_of(f.name, params)) == 0
         && admissible(f, params, targets);
}

/// Up to `count` distinct untried configurations that meet their family's
/// constraints, drawn uniformly.
std::vector<proposal> random_untried(const task_spec& task,
  const std::set<std::string>& tried, size_t count,
  const std::vector<target_facts>& targets, rng_t& rng) {
  std::vector<proposal> out;
  std::set<std::string> picked;
  std::uniform_int_distribution<size_t> pick_family{0,
                                                    task.families.size() - 1};
  for (int attempt = 0; attempt < 20000 && out.size() < count; ++attempt) {
    const auto& f = task.families[pick_family(rng)];
    auto params = random_params(f, rng);
    if (proposable(f, params, tried, targets)
        && picked.insert(key_of(f.name, params)).second)
      out.push_back({f.name, std::move(params), "", "random sample"});
  }
  return out;
}

/// One untried configuration that meets its family's constraints, from a
/// family with the fewest configurations tried so far (ties at random), so
/// that the samples of "local" and "crossover" (the explore phase and the
/// restarts) reach every family instead of leaving one to chance; a family
/// with no untried valid configuration found in its draws gives way to the
/// next.
std::vector<proposal> balanced_untried(const task_spec& task,
  const std::set<std::string>& tried, const std::vector<target_facts>& targets,
  rng_t& rng) {
  std::map<std::string, size_t> count;
  for (const auto& key : tried) // key_of: the family's name, then "|..."
    ++count[key.substr(0, key.find('|'))];
  std::vector<const template_family*> order;
  for (const auto& f : task.families)
    order.push_back(&f);
  std::shuffle(order.begin(), order.end(), rng);
  std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) {
    return count[a->name] < count[b->name];
  });
  for (const auto* f : order)
    for (int attempt = 0; attempt < 5000; ++attempt) {
      auto params = random_params(*f, rng);
      if (proposable(*f, params, tried, targets))
        return {{f->name, std::move(params), "", "random sample"}};
    }
  return {};
}

/// Untried neighbours of `base` that meet the constraints: one parameter
/// moved by one or two steps.
std::vector<proposal> neighbours(const template_family& f,
  const scored_candidate& base, const std::set<std::string>& tried,
  const std::vector<target_facts>& targets) {
  std::vector<proposal> out;
  for (const auto& p : f.params) {
    auto at = static_cast<long>(index_of(p, base.params.at(p.name)));
    for (long step : {-2L, -1L, 1L, 2L}) {
      auto to = at + step;
      if (to < 0 || to >= static_cast<long>(p.values.size()))
        continue;
      auto params = base.params;
      params[p.name] = p.values[static_cast<size_t>(to)];
      if (proposable(f, params, tried, targets))
        out.push_back({f.name, std::move(params), base.id,
                       "neighbour of " + base.id + ": " + p.name + " -> "
                         + p.values[static_cast<size_t>(to)]});
    }
  }
  return out;
}

/// The best passed candidate among history and parent (empty id: none).
scored_candidate best_of(const std::vector<scored_candidate>& history,
                         const scored_candidate& parent) {
  scored_candidate best = parent.status == eval_status::passed
                            ? parent
                            : scored_candidate{};
  for (const auto& h : history)
    if (h.status == eval_status::passed && h.speedup > best.speedup)
      best = h;
  return best;
}

/// A child of the two best passed configurations of the parent's family:
/// each parameter taken from one of them at random; none when untried
/// children that meet the constraints cannot be found.
std::vector<proposal> crossover(const template_family& f,
  const std::vector<scored_candidate>& history, const scored_candidate& parent,
  const std::set<std::string>& tried, const std::vector<target_facts>& targets,
  rng_t& rng) {
  std::vector<scored_candidate> same;
  if (parent.status == eval_status::passed && parent.family == f.name)
    same.push_back(parent);
  for (const auto& h : history)
    if (h.status == eval_status::passed && h.family == f.name
        && h.id != parent.id)
      same.push_back(h);
  std::sort(same.begin(), same.end(),
            [](const auto& a, const auto& b) { return a.speedup > b.speedup; });
  if (same.size() < 2)
    return {};
  const auto& a = same[0];
  const auto& b = same[1];
  std::bernoulli_distribution coin{0.5};
  for (int attempt = 0; attempt < 64; ++attempt) {
    param_map child;
    for (const auto& p : f.params)
      child[p.name] = coin(rng) ? a.params.at(p.name) : b.params.at(p.name);
    if (proposable(f, child, tried, targets))
      return {{f.name, std::move(child), a.id,
               "crossover of " + a.id + " and " + b.id}};
  }
  return {};
}

/// The task restricted to one family when `strategy` names one after a
/// colon ("local:packed"); the strategy without it.
std::pair<task_spec, std::string> focus(const task_spec& task,
                                        const std::string& strategy) {
  auto colon = strategy.find(':');
  if (colon == std::string::npos)
    return {task, strategy};
  auto restricted = task;
  auto name = strategy.substr(colon + 1);
  restricted.families.clear();
  for (const auto& f : task.families)
    if (f.name == name)
      restricted.families.push_back(f);
  return {restricted.families.empty() ? task : restricted,
          strategy.substr(0, colon)};
}

proposal farthest(const task_spec& task, std::vector<proposal> pool,
                  const std::vector<scored_candidate>& history) {
  auto score = [&](const proposal& p) {
    auto nearest = std::numeric_limits<double>::infinity();
    if (const auto* f = family_named(task, p.family))
      for (const auto& h : history)
        nearest = std::min(nearest, param_distance(*f, p.params, h.params)
                                      + (h.family == p.family ? 0.0 : 1e9));
    return nearest;
  };
  auto best = std::max_element(pool.begin(), pool.end(),
                               [&](const auto& a, const auto& b) {
                                 return score(a) < score(b);
                               });
  best->reason = "farthest from everything tried";
  return *best;
}

} // namespace

double param_distance(const template_family& family, const param_map& a,
                      const param_map& b) {
  double d = 0;
  for (const auto& p : family.params) {
    auto ia = a.find(p.name);
    auto ib = b.find(p.name);
    if (ia == a.end() || ib == b.end())
      return std::numeric_limits<double>::infinity();
    auto span = std::max<size_t>(p.values.size() - 1, 1);
    auto diff = std::abs(static_cast<double>(index_of(p, ia->second))
                         - static_cast<double>(index_of(p, ib->second)));
    d += diff / static_cast<double>(span);
  }
  return d;
}

caf::expected<proposal> propose(const task_spec& whole_task,
                                const std::vector<scored_candidate>& history,
                                const scored_candidate& parent,
                                const tuner_options& whole_opts,
                                uint64_t seed,
                                const std::vector<scored_candidate>& elsewhere) {
  auto [task, strategy] = focus(whole_task, whole_opts.strategy);
  auto opts = whole_opts;
  opts.strategy = strategy;
  if (task.families.empty())
    return make_error(error::agent_failed,
                      "task '" + task.name + "' has no templates to tune");
  // Only configurations of the families searched count towards the end of
  // the space (a focused strategy leaves the others out).
  std::set<std::string> tried;
  size_t passed = 0;
  for (const auto* run : {&history, &elsewhere})
    for (const auto& h : *run)
      if (family_named(task, h.family) != nullptr)
        tried.insert(key_of(h.family, h.params));
  for (const auto& h : history)
    passed += h.status == eval_status::passed ? 1 : 0;
  if (tried.size() >= space_size(task))
    return make_error(error::agent_failed,
                      "every configuration of task '" + task.name
                        + "' has been tried");
  rng_t rng{seed};
  auto base = best_of(history, parent);
  if (opts.strategy == "crossover")
    if (const auto* f = family_named(task, base.family)) {
      auto children = crossover(*f, history, parent, tried, opts.targets, rng);
      if (!children.empty())
        return children.front();
    }
  // A parent handed over from elsewhere (another team's best) is climbed
  // from at once; a team's own search samples explore_rounds first.
  auto inherited = parent.status == eval_status::passed
                   && std::none_of(history.begin(), history.end(),
                                   [&](const auto& h) {
                                     return h.id == parent.id;
                                   });
  if ((opts.strategy == "local" || opts.strategy == "crossover")
      && (passed >= opts.explore_rounds || inherited)) {
    if (const auto* f = family_named(task, base.family)) {
      auto near = neighbours(*f, base, tried, opts.targets);
      if (!near.empty()) {
        std::uniform_int_distribution<size_t> pick{0, near.size() - 1};
        return near[pick(rng)];
      }
    }
  }
  auto pool = opts.strategy == "local" || opts.strategy == "crossover"
                ? balanced_untried(task, tried, opts.targets, rng)
                : random_untried(task, tried,
                  opts.strategy == "explore" ? 16 : 1, opts.targets, rng);
  if (pool.empty())
    return make_error(
      error::agent_failed, "no untried configuration that meets the templates' "
                           "constraints was found for task '"
                             + task.name + "'");
  if (opts.strategy == "explore" && (!history.empty() || !elsewhere.empty())) {
    auto everything = history;
    everything.insert(everything.end(), elsewhere.begin(), elsewhere.end());
    return farthest(task, std::move(pool), everything);
  }
  return pool.front();
}

} // namespace eat
