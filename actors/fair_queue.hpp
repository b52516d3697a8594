// A fair-share queue of jobs across teams: stride scheduling with per-team
// weights, plus a priority lane (re-verifications) served before any team.
// The device pool (actors/device_pool.hpp) keeps one for the compile stage
// and one for the timed stage; it holds job ids only.
//
// Stride scheduling: every team has a virtual "pass"; the next job comes from
// the team with the smallest pass that has an eligible job, and that team's
// pass then grows by 1 / weight. A team with weight 3 thus gets three jobs
// for every one of a team with weight 1 while both have work. A team that
// was idle re-enters at the current virtual time, so it cannot save up turns.
//
// Plain value, not thread-safe: owned by one actor.

#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace eat {

/// A fair-share queue of job ids across teams.
class fair_queue {
public:
  /// Decides whether a job may be taken now (e.g. by a given device).
  using predicate = std::function<bool(uint64_t)>;

  /// Sets the share of `team` (default 1); non-positive or non-finite
  /// weights count as the smallest weight, 1e-6.
  void set_weight(const std::string& team, double weight);

  /// Returns the weight of `team` (1 unless set).
  double weight(const std::string& team) const;

  /// Appends `job` to the queue of `team`.
  void push(const std::string& team, uint64_t job);

  /// Appends `job` to the priority lane, served before every team.
  void push_priority(uint64_t job);

  /// Removes and returns the next job that `eligible` accepts: the oldest
  /// eligible priority job, else the oldest eligible job of the team with
  /// the smallest pass. Returns nothing when no job is eligible.
  std::optional<uint64_t> pop(const predicate& eligible);

  /// Removes and returns the next job (every job is eligible).
  std::optional<uint64_t> pop();

  /// Removes `job` wherever it waits; returns whether it was there.
  bool remove(uint64_t job);

  /// Jobs waiting, in total, per team, and in the priority lane.
  size_t size() const;
  std::map<std::string, uint64_t> depth() const;
  size_t priority_size() const;

private:
  struct lane {
    double weight = 1;
    double pass = 0;
    std::deque<uint64_t> jobs;
  };

  static std::optional<uint64_t> take(
    std::deque<uint64_t>& jobs, const predicate& eligible);

  lane& lane_of(const std::string& team);

  std::map<std::string, lane> lanes_;
  std::deque<uint64_t> priority_;
  /// Pass of the last team served: where idle teams re-enter.
  double virtual_time_ = 0;
};

} // namespace eat
