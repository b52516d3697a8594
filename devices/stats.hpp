// Summary statistics of timing samples and the speedup estimate of a
// candidate over its baseline (BENCHMARK-PROTOCOL.md section 3). Computed in
// the parent process from the raw samples the runner reports.
// Pure functions: usable from any thread.

#pragma once

#include <cstdint>
#include <vector>

namespace eat::devices {

/// Summary of one series of samples (nanoseconds or any other unit).
struct sample_summary {
  uint32_t n = 0;
  double median = 0;
  double mean = 0;
  double min = 0;
  double p20 = 0;
  double p80 = 0;
  /// Coefficient of variation: sample standard deviation / mean.
  double cv = 0;
};

/// A speedup with its bootstrap 95 % confidence interval.
struct speedup_estimate {
  /// median(baseline) / median(candidate).
  double point = 0;
  double low = 0;
  double high = 0;
};

/// Returns the `q`-quantile (0..1) of `xs` with linear interpolation between
/// order statistics (Hyndman and Fan type 7, as numpy's default); 0 if empty.
double quantile(std::vector<double> xs, double q);

/// Returns the median of `xs`; 0 if empty.
double median(std::vector<double> xs);

/// Returns the arithmetic mean of `xs`; 0 if empty.
double mean(const std::vector<double>& xs);

/// Returns the sample standard deviation (n - 1 denominator); 0 if n < 2.
double stddev(const std::vector<double>& xs);

/// Returns the standard error of the mean divided by the mean; 0 if n < 2 or
/// the mean is 0.
double relative_standard_error(const std::vector<double>& xs);

/// Returns the standard error of the median divided by the median, without
/// assuming a distribution: the order statistics at ranks n/2 +- 0.98 sqrt(n)
/// bound the median's 95 % confidence interval, and a quarter of their
/// distance over 0.98 (= 1.96 / 2) is the standard error. For normal
/// samples it is about 1.25 x relative_standard_error; a few samples far
/// out, which move a mean and its standard error, barely move it.
/// Infinity if n < 2 or the median is not above 0.
double median_relative_standard_error(std::vector<double> xs);

/// Summarises `xs`.
sample_summary summarize(const std::vector<double>& xs);

/// Estimates median(baseline) / median(candidate) from paired samples
/// (`baseline[i]` and `candidate[i]` were taken in the same round) with a
/// percentile bootstrap over pairs: `resamples` resamples drawn with a
/// generator seeded by `seed`, so the interval is reproducible. Requires
/// equally long, non-empty series; returns all zeros otherwise.
speedup_estimate estimate_speedup(const std::vector<double>& baseline,
  const std::vector<double>& candidate, uint64_t seed,
  uint32_t resamples = 1000);

/// Returns the geometric mean of `xs`; 0 if empty or any value is not > 0.
double geometric_mean(const std::vector<double>& xs);

} // namespace eat::devices
