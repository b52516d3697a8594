// Plateau detection and diagnosis for one team (Evolving Agent Teams: a
// team that stops improving is restructured). Plain code: the supervisor
// feeds it each evaluation and asks whether the team is on a plateau.
//
// An evaluation improves on the team's best only when it passes, its
// geometric-mean speedup exceeds the best by more than `threshold`, and the
// geometric mean of its per-workload 95 % lower bounds exceeds the best too:
// a gain inside the noise is not progress. A team is on a plateau after
// `window` evaluations without an improvement.

#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/protocol/candidate.hpp"
#include "actors/protocol/describe.hpp"
#include "actors/protocol/result.hpp"
#include "actors/protocol/task.hpp"

namespace eat {

/// When a team counts as stuck.
struct plateau_options {
  /// Evaluations without improvement that make a plateau; 0 turns it off.
  uint32_t window = 8;
  /// Relative gain over the best that counts as improvement.
  double threshold = 0.02;
};

/// The best kernel's standing on one workload.
struct workload_gap {
  std::string workload;
  double speedup = 0;
  /// Fraction of the speed of light reached (0 when unknown).
  double sol_fraction = 0;
};
EAT_DESCRIBE(workload_gap, workload, speedup, sol_fraction)

/// What a team did under one strategy.
struct strategy_record {
  uint64_t evaluations = 0;
  uint64_t improvements = 0;
  double best_speedup = 0;
};
EAT_DESCRIBE(strategy_record, evaluations, improvements, best_speedup)

/// Why the supervisor thinks a team is stuck (stored with the decision).
struct plateau_diagnosis {
  std::string team;
  std::string strategy;
  uint64_t evaluations_since_improvement = 0;
  std::string best_candidate;
  double best_speedup = 0;
  /// Mean normalised parameter distance between the window's candidates:
  /// near 0 means the team keeps proposing nearly the same kernel.
  double similarity_distance = 0;
  /// Window's candidates by status, e.g. {"passed": 6, "incorrect": 2}.
  std::map<std::string, uint64_t> failure_mix;
  /// Mean Jaccard similarity of the lines of the window's agent-written
  /// (family "custom") sources; 0 when there are fewer than two.
  double source_similarity = 0;
  /// The best kernel's weakest workload and its speedup.
  std::string lagging_workload;
  double lagging_speedup = 0;
  /// The best kernel on every workload, weakest first.
  std::vector<workload_gap> workloads;
  /// Best speedup per template family the team has tried.
  std::map<std::string, double> families_tried;
  /// Strategies the team has used, and with what result.
  std::map<std::string, strategy_record> strategies;
};
EAT_DESCRIBE(plateau_diagnosis, team, strategy, evaluations_since_improvement,
             best_candidate, best_speedup, similarity_distance, failure_mix,
             source_similarity, lagging_workload, lagging_speedup, workloads,
             families_tried, strategies)

/// Tracks one team's evaluations.
class plateau_tracker {
public:
  explicit plateau_tracker(plateau_options opts = {});

  /// Records one evaluation of the team, made under `strategy`.
  void add(const candidate& c, const eval_result& r,
           const std::string& strategy = "");

  /// Whether the last `window` evaluations brought no improvement.
  bool on_plateau() const;

  /// Starts a new window (after the team was restructured).
  void reset_window();

  /// The diagnosis of the current window.
  plateau_diagnosis diagnose(const std::string& team,
                             const std::string& strategy,
                             const task_spec& task) const;

  /// Evaluations in the current window (since the last improvement or
  /// reset).
  size_t window_length() const {
    return window_.size();
  }

  uint64_t since_improvement() const {
    return since_improvement_;
  }

private:
  plateau_options opts_;
  candidate best_candidate_;
  eval_result best_;
  uint64_t since_improvement_ = 0;
  /// The candidates and results since the last improvement or reset.
  std::vector<std::pair<scored_candidate, eval_status>> window_;
  /// Line hashes of the window's custom sources.
  std::vector<std::vector<uint64_t>> window_sources_;
  std::map<std::string, double> families_;
  std::map<std::string, strategy_record> strategies_;
};

/// Whether `r` improves on `best` (see the header comment).
bool improves(const eval_result& r, const eval_result& best, double threshold);

} // namespace eat
