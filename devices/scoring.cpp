#include "devices/scoring.hpp"

#include <cstdio>

#include "devices/rng.hpp"
#include "devices/stats.hpp"

namespace eat::devices {

namespace {

/// Seed stream of the bootstrap resampling of workload i.
constexpr uint64_t bootstrap_stream = 3'000'000;

std::vector<double> as_doubles(const std::vector<int64_t>& xs) {
  return {xs.begin(), xs.end()};
}

std::string nanoseconds(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", ns);
  return buf;
}

} // namespace

workload_result score_workload(const workload_report& report, uint64_t seed) {
  workload_result result;
  result.workload = report.workload;
  result.status = report.status;
  result.detail = report.detail;
  result.max_abs_error = report.max_abs_error;
  result.max_rel_error = report.max_rel_error;
  auto base = as_doubles(report.baseline_ns);
  auto cand = as_doubles(report.candidate_ns);
  if (cand.empty() || base.size() != cand.size())
    return result;
  result.samples = static_cast<uint32_t>(cand.size());
  auto summary = summarize(cand);
  result.baseline_median_ns = median(base);
  result.candidate_median_ns = summary.median;
  result.candidate_mean_ns = summary.mean;
  result.candidate_min_ns = summary.min;
  result.candidate_p20_ns = summary.p20;
  result.candidate_p80_ns = summary.p80;
  result.candidate_cv = summary.cv;
  if (report.candidate_wall_ns > 0)
    result.candidate_cpu_ratio = static_cast<double>(report.candidate_cpu_ns)
                                 / static_cast<double>(report.candidate_wall_ns);
  if (report.status == eval_status::passed) {
    auto speedup = estimate_speedup(base, cand, seed);
    result.speedup = speedup.point;
    result.speedup_low = speedup.low;
    result.speedup_high = speedup.high;
  }
  return result;
}

scored_run score_reply(const runner_reply& reply,
  const std::vector<workload>& workloads, uint64_t seed) {
  scored_run result;
  result.status = reply.status;
  result.detail = reply.detail;
  std::vector<double> speedups;
  for (size_t i = 0; i < workloads.size(); ++i) {
    if (i < reply.workloads.size()) {
      auto scored = score_workload(
        reply.workloads[i], derive_seed(seed, bootstrap_stream + i));
      if (scored.status == eval_status::passed)
        speedups.push_back(scored.speedup);
      result.workloads.push_back(std::move(scored));
      continue;
    }
    workload_result skipped;
    skipped.workload = workloads[i].name;
    skipped.detail = "not run: an earlier check failed";
    result.workloads.push_back(std::move(skipped));
  }
  if (result.status == eval_status::passed
      && speedups.size() == workloads.size())
    result.geomean_speedup = geometric_mean(speedups);
  else if (result.status == eval_status::passed) {
    // A runner that claims success without reporting every workload.
    result.status = eval_status::runtime_error;
    result.detail = "the runner reported " + std::to_string(speedups.size())
                    + " of " + std::to_string(workloads.size()) + " workloads";
  }
  return result;
}

scored_run apply_speed_of_light(scored_run run, const kind& k,
  const std::vector<workload>& workloads, const cpu_peak& peak, double slack) {
  if (run.status != eval_status::passed)
    return run;
  for (size_t i = 0; i < workloads.size() && i < run.workloads.size(); ++i) {
    auto dims = k.dims(workloads[i]);
    auto t_sol = speed_of_light_ns(
      peak, k.useful_flops(dims), k.compulsory_bytes(dims));
    auto& w = run.workloads[i];
    if (w.candidate_median_ns > 0)
      w.sol_fraction = t_sol * slack / w.candidate_median_ns;
    if (!(w.candidate_median_ns < t_sol))
      continue;
    w.status = eval_status::rejected;
    w.detail = "faster than the speed of light on " + workloads[i].name
               + ": median " + nanoseconds(w.candidate_median_ns)
               + " ns < T_SOL " + nanoseconds(t_sol) + " ns";
    run.status = eval_status::rejected;
    run.detail = w.detail;
    run.geomean_speedup = 0;
    return run;
  }
  return run;
}

} // namespace eat::devices
