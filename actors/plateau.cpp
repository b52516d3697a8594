#include "actors/plateau.hpp"

#include <cmath>

#include "actors/agent/builtin_tuner.hpp"

namespace eat {

namespace {

double geomean_of_lows(const eval_result& r) {
  if (r.workloads.empty())
    return 0;
  double log_sum = 0;
  for (const auto& w : r.workloads) {
    if (w.speedup_low <= 0)
      return 0;
    log_sum += std::log(w.speedup_low);
  }
  return std::exp(log_sum / static_cast<double>(r.workloads.size()));
}

} // namespace

bool improves(const eval_result& r, const eval_result& best, double threshold) {
  if (r.status != eval_status::passed)
    return false;
  if (best.status != eval_status::passed)
    return true;
  return r.geomean_speedup > best.geomean_speedup * (1 + threshold)
         && geomean_of_lows(r) > best.geomean_speedup;
}

plateau_tracker::plateau_tracker(plateau_options opts) : opts_(opts) {
  // nop
}

void plateau_tracker::add(const candidate& c, const eval_result& r) {
  if (improves(r, best_, opts_.threshold)) {
    best_ = r;
    best_candidate_ = c;
    since_improvement_ = 0;
    window_.clear();
    return;
  }
  since_improvement_ += 1;
  window_.push_back({{c.id, c.family, c.params, r.status, r.geomean_speedup},
                     r.status});
}

bool plateau_tracker::on_plateau() const {
  return opts_.window > 0 && window_.size() >= opts_.window;
}

void plateau_tracker::reset_window() {
  window_.clear();
}

plateau_diagnosis plateau_tracker::diagnose(const std::string& team,
                                            const std::string& strategy,
                                            const task_spec& task) const {
  plateau_diagnosis d;
  d.team = team;
  d.strategy = strategy;
  d.evaluations_since_improvement = since_improvement_;
  d.best_candidate = best_candidate_.id;
  d.best_speedup = best_.geomean_speedup;
  for (const auto& [s, status] : window_)
    d.failure_mix[to_string(status)] += 1;
  double total = 0;
  uint64_t pairs = 0;
  for (size_t i = 0; i < window_.size(); ++i)
    for (size_t j = i + 1; j < window_.size(); ++j)
      for (const auto& f : task.families)
        if (f.name == window_[i].first.family
            && f.name == window_[j].first.family) {
          total += param_distance(f, window_[i].first.params,
                                  window_[j].first.params);
          ++pairs;
        }
  d.similarity_distance = pairs > 0 ? total / static_cast<double>(pairs) : 0;
  for (const auto& w : best_.workloads)
    if (d.lagging_workload.empty() || w.speedup < d.lagging_speedup) {
      d.lagging_workload = w.workload;
      d.lagging_speedup = w.speedup;
    }
  return d;
}

} // namespace eat
