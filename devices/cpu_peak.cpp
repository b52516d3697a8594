#include "devices/cpu_peak.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>

#include <immintrin.h>
#include <sched.h>

#include "actors/protocol/error.hpp"
#include "devices/cpu_device.hpp"

namespace eat::devices {

namespace {

using clock_type = std::chrono::steady_clock;

/// Repetitions of each probe; the best one counts.
constexpr int repetitions = 5;

/// Loop trips of one FMA repetition (each trip: fma_chains FMAs).
constexpr long fma_trips = 400'000;

/// Elements of each triad array: 8 Mi doubles = 64 MiB per array.
constexpr size_t triad_elements = size_t{8} << 20;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Runs `fn` (returning the work it did) `repetitions` times; the best rate.
template<class F>
double best_rate(F fn) {
  double best = 0;
  for (int i = 0; i < repetitions; ++i) {
    auto start = clock_type::now();
    double work = fn();
    best = std::max(best, work / seconds_since(start));
  }
  return best;
}

/// Sums every lane of every chain in `acc` into a double.
template<class Vector>
double lane_sum(const Vector* acc) {
  double sum = 0;
  for (int c = 0; c < fma_chains; ++c) {
    float x[sizeof(Vector) / sizeof(float)];
    std::memcpy(x, &acc[c], sizeof(Vector));
    for (auto lane : x)
      sum += lane;
  }
  return sum;
}

__attribute__((target("avx512f"))) fma_run fma_avx512(long trips) {
  __m512 acc[fma_chains];
  for (int c = 0; c < fma_chains; ++c)
    acc[c] = _mm512_set1_ps(fma_chain_start(c));
  const auto mul = _mm512_set1_ps(fma_mul);
  const auto add = _mm512_set1_ps(fma_add);
  for (long t = 0; t < trips; ++t)
    for (auto& x : acc)
      x = _mm512_fmadd_ps(x, mul, add);
  return {
    2.0 * 16 * fma_chains * static_cast<double>(trips), 16, lane_sum(acc)};
}

__attribute__((target("avx2,fma"))) fma_run fma_avx2(long trips) {
  __m256 acc[fma_chains];
  for (int c = 0; c < fma_chains; ++c)
    acc[c] = _mm256_set1_ps(fma_chain_start(c));
  const auto mul = _mm256_set1_ps(fma_mul);
  const auto add = _mm256_set1_ps(fma_add);
  for (long t = 0; t < trips; ++t)
    for (auto& x : acc)
      x = _mm256_fmadd_ps(x, mul, add);
  return {2.0 * 8 * fma_chains * static_cast<double>(trips), 8, lane_sum(acc)};
}

fma_run fma_scalar(long trips) {
  float acc[fma_chains];
  for (int c = 0; c < fma_chains; ++c)
    acc[c] = fma_chain_start(c);
  for (long t = 0; t < trips; ++t)
    for (auto& x : acc)
      x = x * fma_mul + fma_add;
  return {2.0 * fma_chains * static_cast<double>(trips), 1, lane_sum(acc)};
}

double measure_flops() {
  // The checksum keeps every chain live: before 2026-12-01 only the first
  // chain reached the result, the compiler dropped the other 11, and the
  // probe timed one dependent chain (FMA latency, not throughput).
  volatile double sink = 0;
  return best_rate([&] {
    auto run = run_fma_probe(fma_trips);
    sink = run.checksum;
    return run.flops;
  });
}

double measure_bandwidth() {
  auto a = std::make_unique<double[]>(triad_elements);
  auto b = std::make_unique<double[]>(triad_elements);
  auto c = std::make_unique<double[]>(triad_elements);
  std::fill(b.get(), b.get() + triad_elements, 1.0);
  std::fill(c.get(), c.get() + triad_elements, 2.0);
  std::fill(a.get(), a.get() + triad_elements, 0.0);
  auto triad = [&] {
    double* __restrict x = a.get();
    const double* __restrict y = b.get();
    const double* __restrict z = c.get();
    for (size_t i = 0; i < triad_elements; ++i)
      x[i] = y[i] + 3.0 * z[i];
    volatile double sink = x[triad_elements / 2];
    (void) sink;
    // Two reads, one write and the write's line fill: 32 bytes an element.
    // Counting the fill raises the measured rate, the safe direction.
    return 32.0 * triad_elements;
  };
  return best_rate(triad);
}

} // namespace

fma_run run_fma_probe(long trips) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return fma_avx512(trips);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return fma_avx2(trips);
  return fma_scalar(trips);
}

caf::expected<cpu_peak> measure_cpu_peak(int core) {
  pinned_thread pin{core < 0 ? std::vector<int>{} : std::vector<int>{core}};
  if (!pin.error().empty())
    return make_error(
      error::device_unavailable, "cannot pin the peak probe to core "
                                   + std::to_string(core) + ": " + pin.error());
  cpu_peak result;
  try {
    result.flops_per_s = cpu_peak_safety_factor * measure_flops();
    result.bytes_per_s = cpu_peak_safety_factor * measure_bandwidth();
  } catch (const std::bad_alloc&) {
    return make_error(error::device_unavailable,
      "no memory for the bandwidth probe (3 x 64 MiB)");
  }
  return result;
}

double speed_of_light_ns(const cpu_peak& peak, double flops, double bytes) {
  double t_flops = peak.flops_per_s > 0 ? flops / peak.flops_per_s : 0;
  double t_bytes = peak.bytes_per_s > 0 ? bytes / peak.bytes_per_s : 0;
  return 1e9 * std::max(t_flops, t_bytes);
}

} // namespace eat::devices
