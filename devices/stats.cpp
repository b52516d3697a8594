#include "devices/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "devices/rng.hpp"

namespace eat::devices {

double quantile(std::vector<double> xs, double q) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(xs.size() - 1);
  auto lo = static_cast<size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, xs.size() - 1);
  auto frac = pos - static_cast<double>(lo);
  return xs[lo] + frac * (xs[hi] - xs[lo]);
}

double median(std::vector<double> xs) {
  return quantile(std::move(xs), 0.5);
}

double mean(const std::vector<double>& xs) {
  if (xs.empty())
    return 0;
  return std::accumulate(xs.begin(), xs.end(), 0.0)
         / static_cast<double>(xs.size());
}

double stddev(const std::vector<double>& xs) {
  if (xs.size() < 2)
    return 0;
  auto m = mean(xs);
  double sum = 0;
  for (auto x : xs)
    sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(xs.size() - 1));
}

double relative_standard_error(const std::vector<double>& xs) {
  auto m = mean(xs);
  if (xs.size() < 2 || m == 0)
    return 0;
  return stddev(xs) / std::sqrt(static_cast<double>(xs.size())) / m;
}

double median_relative_standard_error(std::vector<double> xs) {
  if (xs.size() < 2)
    return INFINITY;
  std::sort(xs.begin(), xs.end());
  auto n = static_cast<double>(xs.size());
  auto middle = (n - 1) / 2;
  auto half = 0.98 * std::sqrt(n);
  auto lo = static_cast<size_t>(std::max(0.0, std::floor(middle - half)));
  auto hi = static_cast<size_t>(std::min(n - 1, std::ceil(middle + half)));
  auto m = (xs[static_cast<size_t>(std::floor(middle))]
             + xs[static_cast<size_t>(std::ceil(middle))])
           / 2;
  if (!(m > 0))
    return INFINITY;
  return (xs[hi] - xs[lo]) / (4 * 0.98) / m;
}

sample_summary summarize(const std::vector<double>& xs) {
  sample_summary result;
  if (xs.empty())
    return result;
  result.n = static_cast<uint32_t>(xs.size());
  result.median = median(xs);
  result.mean = mean(xs);
  result.min = *std::min_element(xs.begin(), xs.end());
  result.p20 = quantile(xs, 0.2);
  result.p80 = quantile(xs, 0.8);
  result.cv = result.mean != 0 ? stddev(xs) / result.mean : 0;
  return result;
}

speedup_estimate estimate_speedup(const std::vector<double>& baseline,
  const std::vector<double>& candidate, uint64_t seed, uint32_t resamples) {
  speedup_estimate result;
  auto n = baseline.size();
  if (n == 0 || n != candidate.size())
    return result;
  auto ratio = [](double base, double cand) {
    return cand > 0 ? base / cand : 0.0;
  };
  result.point = ratio(median(baseline), median(candidate));
  rng gen{seed};
  std::vector<double> ratios;
  ratios.reserve(resamples);
  std::vector<double> base(n);
  std::vector<double> cand(n);
  for (uint32_t r = 0; r < resamples; ++r) {
    for (size_t i = 0; i < n; ++i) {
      auto pick = gen.below(n);
      base[i] = baseline[pick];
      cand[i] = candidate[pick];
    }
    ratios.push_back(ratio(median(base), median(cand)));
  }
  result.low = quantile(ratios, 0.025);
  result.high = quantile(ratios, 0.975);
  return result;
}

double geometric_mean(const std::vector<double>& xs) {
  if (xs.empty())
    return 0;
  double log_sum = 0;
  for (auto x : xs) {
    if (!(x > 0))
      return 0;
    log_sum += std::log(x);
  }
  return std::exp(log_sum / static_cast<double>(xs.size()));
}

} // namespace eat::devices
