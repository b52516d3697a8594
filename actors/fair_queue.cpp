#include "actors/fair_queue.hpp"

#include <algorithm>
#include <cmath>

namespace eat {

namespace {

constexpr double min_weight = 1e-6;

} // namespace

void fair_queue::set_weight(const std::string& team, double weight) {
  if (!std::isfinite(weight) || weight < min_weight)
    weight = min_weight;
  lane_of(team).weight = weight;
}

double fair_queue::weight(const std::string& team) const {
  auto i = lanes_.find(team);
  return i == lanes_.end() ? 1.0 : i->second.weight;
}

fair_queue::lane& fair_queue::lane_of(const std::string& team) {
  auto [i, added] = lanes_.try_emplace(team);
  if (added)
    i->second.pass = virtual_time_;
  return i->second;
}

void fair_queue::push(const std::string& team, uint64_t job) {
  auto& l = lane_of(team);
  // An idle team re-enters at the current virtual time: no saved-up turns.
  if (l.jobs.empty())
    l.pass = std::max(l.pass, virtual_time_);
  l.jobs.push_back(job);
}

void fair_queue::push_priority(uint64_t job) {
  priority_.push_back(job);
}

std::optional<uint64_t> fair_queue::take(
  std::deque<uint64_t>& jobs, const predicate& eligible) {
  auto i = std::find_if(jobs.begin(), jobs.end(), eligible);
  if (i == jobs.end())
    return std::nullopt;
  auto job = *i;
  jobs.erase(i);
  return job;
}

std::optional<uint64_t> fair_queue::pop(const predicate& eligible) {
  if (auto job = take(priority_, eligible))
    return job;
  lane* best = nullptr;
  for (auto& [team, l] : lanes_) {
    if (best != nullptr && l.pass >= best->pass)
      continue;
    if (std::any_of(l.jobs.begin(), l.jobs.end(), eligible))
      best = &l;
  }
  if (best == nullptr)
    return std::nullopt;
  auto job = take(best->jobs, eligible);
  virtual_time_ = best->pass;
  best->pass += 1.0 / best->weight;
  return job;
}

std::optional<uint64_t> fair_queue::pop() {
  return pop([](uint64_t) {
    return true;
  });
}

bool fair_queue::remove(uint64_t job) {
  auto drop = [job](std::deque<uint64_t>& jobs) {
    auto i = std::find(jobs.begin(), jobs.end(), job);
    if (i == jobs.end())
      return false;
    jobs.erase(i);
    return true;
  };
  if (drop(priority_))
    return true;
  for (auto& [team, l] : lanes_)
    if (drop(l.jobs))
      return true;
  return false;
}

size_t fair_queue::size() const {
  auto n = priority_.size();
  for (const auto& [team, l] : lanes_)
    n += l.jobs.size();
  return n;
}

std::map<std::string, uint64_t> fair_queue::depth() const {
  std::map<std::string, uint64_t> out;
  for (const auto& [team, l] : lanes_)
    if (!l.jobs.empty())
      out[team] = l.jobs.size();
  return out;
}

size_t fair_queue::priority_size() const {
  return priority_.size();
}

} // namespace eat
