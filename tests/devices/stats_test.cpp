// Statistics of timing samples, checked against values computed by hand.

#include <cmath>

#include <catch2/catch.hpp>

#include "devices/rng.hpp"
#include "devices/stats.hpp"

using namespace eat::devices;

TEST_CASE("quantiles interpolate linearly between order statistics") {
  std::vector<double> xs{5, 1, 4, 2, 3};
  CHECK(quantile(xs, 0.0) == 1.0);
  CHECK(quantile(xs, 1.0) == 5.0);
  CHECK(quantile(xs, 0.2) == Approx(1.8));
  CHECK(quantile(xs, 0.8) == Approx(4.2));
  CHECK(median(xs) == 3.0);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({}) == 0.0);
}

TEST_CASE("mean, standard deviation and relative standard error") {
  std::vector<double> xs{2, 4, 4, 4, 5, 5, 7, 9};
  CHECK(mean(xs) == 5.0);
  // Squared deviations sum to 32; the sample variance is 32 / 7.
  CHECK(stddev(xs) == Approx(std::sqrt(32.0 / 7.0)));
  CHECK(relative_standard_error(xs)
        == Approx(std::sqrt(32.0 / 7.0) / std::sqrt(8.0) / 5.0));
  CHECK(stddev({3}) == 0.0);
  CHECK(relative_standard_error({3}) == 0.0);
}

TEST_CASE("the median's relative standard error comes from the order "
          "statistics around it") {
  // n = 9: ranks 4 +- 0.98 * 3 = 1.06 .. 6.94, widened to 1 and 7 (values
  // 2 and 8); the median is 5.
  std::vector<double> xs{9, 1, 8, 2, 7, 3, 6, 4, 5};
  CHECK(median_relative_standard_error(xs) == Approx((8.0 - 2.0) / 3.92 / 5));
  CHECK(std::isinf(median_relative_standard_error({3})));
  CHECK(std::isinf(median_relative_standard_error({0, 0, 0})));
}

TEST_CASE("on normal samples the median's relative standard error is about "
          "1.25 times the mean's") {
  rng gen{3};
  std::vector<double> xs;
  for (int i = 0; i < 4000; ++i) {
    // Box-Muller: a normal deviate from two uniform ones.
    auto u = 1 - gen.uniform();
    auto v = gen.uniform();
    auto z = std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
    xs.push_back(1000 + 30 * z);
  }
  auto ratio = median_relative_standard_error(xs) / relative_standard_error(xs);
  CHECK(ratio > 1.1);
  CHECK(ratio < 1.45);
}

TEST_CASE("a few samples far out barely move the median's relative standard "
          "error, where they raise the mean's many times") {
  rng gen{4};
  std::vector<double> xs;
  for (int i = 0; i < 400; ++i)
    xs.push_back(i % 25 == 24 ? 2700 : 1000 + gen.uniform(-30, 30));
  CHECK(relative_standard_error(xs) > 0.01);
  CHECK(median_relative_standard_error(xs) < 0.003);
}

TEST_CASE("a summary gives median, mean, min, p20, p80 and CV") {
  auto s = summarize({10, 20, 30, 40, 50});
  CHECK(s.n == 5);
  CHECK(s.median == 30.0);
  CHECK(s.mean == 30.0);
  CHECK(s.min == 10.0);
  CHECK(s.p20 == Approx(18.0));
  CHECK(s.p80 == Approx(42.0));
  // Sample standard deviation sqrt(1000 / 4) = 15.811...; CV = sd / mean.
  CHECK(s.cv == Approx(std::sqrt(250.0) / 30.0));
  CHECK(summarize({}).n == 0);
}

TEST_CASE("the speedup is the ratio of medians, with a degenerate interval "
          "for constant samples") {
  auto s = estimate_speedup({10, 10, 10}, {5, 5, 5}, 1);
  CHECK(s.point == 2.0);
  CHECK(s.low == 2.0);
  CHECK(s.high == 2.0);
}

TEST_CASE("the bootstrap interval is reproducible and brackets the point "
          "estimate") {
  std::vector<double> base{100, 104, 98, 110, 101, 99, 103, 97, 105, 102};
  std::vector<double> cand{50, 55, 49, 60, 51, 48, 52, 47, 53, 54};
  auto a = estimate_speedup(base, cand, 7);
  auto b = estimate_speedup(base, cand, 7);
  CHECK(a.low == b.low);
  CHECK(a.high == b.high);
  // Medians 101.5 and 51.5.
  CHECK(a.point == Approx(101.5 / 51.5));
  CHECK(a.low <= a.point);
  CHECK(a.point <= a.high);
  CHECK(a.low < a.high);
  CHECK(a.low > 1.5);
  CHECK(a.high < 2.5);
}

TEST_CASE("the speedup of mismatched or empty series is zero") {
  CHECK(estimate_speedup({1, 2}, {1}, 1).point == 0.0);
  CHECK(estimate_speedup({}, {}, 1).point == 0.0);
}

TEST_CASE("the geometric mean is zero unless every value is positive") {
  CHECK(geometric_mean({1, 4}) == Approx(2.0));
  CHECK(geometric_mean({2, 8, 4}) == Approx(4.0));
  CHECK(geometric_mean({2, 0}) == 0.0);
  CHECK(geometric_mean({}) == 0.0);
}
