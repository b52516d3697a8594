// The peak compute rate and memory bandwidth of one CPU core, measured by a
// short probe when a CPU device is made (devices/cpu_device.hpp), and the
// speed-of-light time T_SOL of a workload derived from them
// (BENCHMARK-PROTOCOL.md section 4, docs/harness.md "Speed of light").
//
// measure_cpu_peak() pins the calling thread to a core for the probe and
// restores its affinity afterwards; call it from the thread that makes the
// device. cpu_peak is a plain value: copy freely, use from any thread.

#pragma once

#include <caf/expected.hpp>

namespace eat::devices {

/// Peaks no honest single-threaded kernel can exceed on one core.
struct cpu_peak {
  /// Floating-point operations per second (an FMA counts as two).
  double flops_per_s = 0;
  /// Bytes moved to and from memory per second.
  double bytes_per_s = 0;
};

/// Factor by which the measured best is raised before it is used as the
/// peak: a loaded machine or a noisy repetition can only make the probe
/// slower, never faster, so the factor keeps an honest kernel from ever
/// looking faster than light (documented in docs/harness.md).
constexpr double cpu_peak_safety_factor = 4.0;

/// Independent accumulator chains of the FMA probe: more than latency x
/// throughput of the FMA units of current cores (4 cycles x 2 units = 8),
/// so that the units stay busy.
constexpr int fma_chains = 12;

/// Each chain's step x <- x * fma_mul + fma_add, from fma_chain_start(c).
constexpr float fma_mul = 0.999999f;
constexpr float fma_add = 1e-7f;

constexpr float fma_chain_start(int chain) {
  return 1.0f + static_cast<float>(chain) / 16;
}

/// One run of the FMA probe.
struct fma_run {
  /// FLOPs done (an FMA counts as two).
  double flops = 0;
  /// fp32 lanes of each chain: 16 (AVX-512F), 8 (AVX2+FMA) or 1 (scalar).
  int lanes = 0;
  /// The sum of every lane of every chain at the end: it depends on each
  /// chain, so the compiler cannot drop any of them.
  double checksum = 0;
};

/// Runs `trips` steps of every FMA chain in the widest code this CPU
/// supports (AVX-512F, else AVX2+FMA, else scalar).
fma_run run_fma_probe(long trips);

/// Measures the core's best fp32 FMA throughput (the widest of AVX-512F,
/// AVX2+FMA or scalar code that this CPU supports, several independent
/// accumulator chains) and its STREAM-triad bandwidth on 64 MiB arrays; each
/// is the best of a few repetitions, multiplied by cpu_peak_safety_factor.
/// Runs on `core` (-1: where the thread is); takes about 0.3 s.
caf::expected<cpu_peak> measure_cpu_peak(int core);

/// The speed-of-light time in nanoseconds of a workload doing `flops` useful
/// operations and moving `bytes` compulsory bytes:
/// max(flops / peak flops, bytes / peak bandwidth).
double speed_of_light_ns(const cpu_peak& peak, double flops, double bytes);

} // namespace eat::devices
