#include "actors/plateau.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

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

/// Sorted hashes of the non-blank lines of `source`.
std::vector<uint64_t> line_hashes(const std::string& source) {
  std::vector<uint64_t> out;
  size_t start = 0;
  while (start < source.size()) {
    auto end = source.find('\n', start);
    if (end == std::string::npos)
      end = source.size();
    auto first = source.find_first_not_of(" \t\r", start);
    if (first < end) {
      uint64_t h = 0xcbf29ce484222325ULL;
      for (auto i = first; i < end; ++i)
        h = (h ^ static_cast<unsigned char>(source[i])) * 0x100000001b3ULL;
      out.push_back(h);
    }
    start = end + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(common));
  auto all = a.size() + b.size() - common.size();
  return all == 0 ? 1.0
                  : static_cast<double>(common.size())
                      / static_cast<double>(all);
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

void plateau_tracker::add(const candidate& c, const eval_result& r,
                          const std::string& strategy) {
  auto passed = r.status == eval_status::passed;
  if (passed) {
    auto& f = families_[c.family];
    f = std::max(f, r.geomean_speedup);
  }
  auto& s = strategies_[strategy.empty() ? "unknown" : strategy];
  s.evaluations += 1;
  if (passed)
    s.best_speedup = std::max(s.best_speedup, r.geomean_speedup);
  if (improves(r, best_, opts_.threshold)) {
    s.improvements += 1;
    best_ = r;
    best_candidate_ = c;
    since_improvement_ = 0;
    window_.clear();
    window_sources_.clear();
    return;
  }
  since_improvement_ += 1;
  window_.push_back({{c.id, c.family, c.params, r.status, r.geomean_speedup},
                     r.status});
  if (c.family == "custom")
    window_sources_.push_back(line_hashes(c.source));
}

bool plateau_tracker::on_plateau() const {
  return opts_.window > 0 && window_.size() >= opts_.window;
}

void plateau_tracker::reset_window() {
  window_.clear();
  window_sources_.clear();
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
  double similar = 0;
  uint64_t source_pairs = 0;
  for (size_t i = 0; i < window_sources_.size(); ++i)
    for (size_t j = i + 1; j < window_sources_.size(); ++j) {
      similar += jaccard(window_sources_[i], window_sources_[j]);
      ++source_pairs;
    }
  d.source_similarity
    = source_pairs > 0 ? similar / static_cast<double>(source_pairs) : 0;
  for (const auto& w : best_.workloads) {
    d.workloads.push_back({w.workload, w.speedup, w.sol_fraction});
    if (d.lagging_workload.empty() || w.speedup < d.lagging_speedup) {
      d.lagging_workload = w.workload;
      d.lagging_speedup = w.speedup;
    }
  }
  std::sort(d.workloads.begin(), d.workloads.end(),
            [](const auto& a, const auto& b) { return a.speedup < b.speedup; });
  d.families_tried = families_;
  d.strategies = strategies_;
  return d;
}

} // namespace eat
