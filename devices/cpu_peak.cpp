#include "devices/cpu_peak.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>

#include <immintrin.h>
#include <sched.h>

#include "actors/protocol/error.hpp"

namespace eat::devices {

namespace {

using clock_type = std::chrono::steady_clock;

/// Repetitions of each probe; the best one counts.
constexpr int repetitions = 5;

/// Loop trips of one FMA repetition (each trip: 12 chains of one FMA).
constexpr long fma_trips = 400'000;

/// Independent accumulator chains: more than latency × throughput of FMA
/// units on current cores (4 cycles × 2 units = 8), so the units stay busy.
constexpr int chains = 12;

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

__attribute__((target("avx512f"))) double fma_avx512() {
  __m512 acc[chains];
  for (auto& x : acc)
    x = _mm512_set1_ps(1.0f);
  const auto mul = _mm512_set1_ps(0.999999f);
  const auto add = _mm512_set1_ps(1e-7f);
  for (long t = 0; t < fma_trips; ++t)
    for (auto& x : acc)
      x = _mm512_fmadd_ps(x, mul, add);
  alignas(64) float out[16];
  _mm512_store_ps(out, acc[0]);
  volatile float sink = out[0];
  (void) sink;
  return 2.0 * 16 * chains * fma_trips;
}

__attribute__((target("avx2,fma"))) double fma_avx2() {
  __m256 acc[chains];
  for (auto& x : acc)
    x = _mm256_set1_ps(1.0f);
  const auto mul = _mm256_set1_ps(0.999999f);
  const auto add = _mm256_set1_ps(1e-7f);
  for (long t = 0; t < fma_trips; ++t)
    for (auto& x : acc)
      x = _mm256_fmadd_ps(x, mul, add);
  alignas(32) float out[8];
  _mm256_store_ps(out, acc[0]);
  volatile float sink = out[0];
  (void) sink;
  return 2.0 * 8 * chains * fma_trips;
}

double fma_scalar() {
  float acc[chains];
  std::fill(acc, acc + chains, 1.0f);
  for (long t = 0; t < fma_trips; ++t)
    for (auto& x : acc)
      x = x * 0.999999f + 1e-7f;
  volatile float sink = acc[0];
  (void) sink;
  return 2.0 * chains * fma_trips;
}

double measure_flops() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return best_rate(fma_avx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return best_rate(fma_avx2);
  return best_rate(fma_scalar);
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

/// Pins the calling thread to `core` for its lifetime, then restores it.
class pinned_thread {
public:
  static caf::expected<std::unique_ptr<pinned_thread>> make(int core) {
    auto result = std::unique_ptr<pinned_thread>{new pinned_thread};
    if (core < 0)
      return result;
    if (::sched_getaffinity(0, sizeof(cpu_set_t), &result->saved_) != 0)
      return make_error(error::device_unavailable, "sched_getaffinity failed");
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    if (::sched_setaffinity(0, sizeof(one), &one) != 0)
      return make_error(error::device_unavailable,
        "cannot pin the peak probe to core " + std::to_string(core));
    result->restore_ = true;
    return result;
  }

  ~pinned_thread() {
    if (restore_)
      ::sched_setaffinity(0, sizeof(saved_), &saved_);
  }

private:
  pinned_thread() {
    CPU_ZERO(&saved_);
  }

  cpu_set_t saved_;
  bool restore_ = false;
};

} // namespace

caf::expected<cpu_peak> measure_cpu_peak(int core) {
  auto pin = pinned_thread::make(core);
  if (!pin)
    return std::move(pin.error());
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
