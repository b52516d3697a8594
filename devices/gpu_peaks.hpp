// Peak rates of GPUs for the speed-of-light gate and the device's
// capabilities: a table of vendor figures by model, and a short measurement
// of device-to-device copy bandwidth that refines it (the GPU device takes
// the lower bandwidth of the two). Table figures are dense (no sparsity),
// boost clocks, per GPU (one GCD-pair package for MI250X).
//
// Pure lookups usable from any thread; the measurement runs a copy on the
// GPU from the calling thread and may block on the driver.

#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace eat::devices {

/// Vendor peak figures of one GPU model, in FLOP/s and bytes/s.
struct gpu_peaks {
  /// The table entry matched, e.g. "H100 SXM".
  std::string model;
  /// fp32 on the vector units (CUDA cores / stream processors).
  double fp32_flops = 0;
  /// tf32 (NVIDIA) or fp32 matrix (AMD) on the tensor/matrix units; 0 if
  /// the GPU has none.
  double tf32_flops = 0;
  /// fp16/bf16 on the tensor/matrix units with fp32 accumulation.
  double bf16_flops = 0;
  /// Memory (HBM/GDDR) bandwidth.
  double bytes_per_s = 0;

  /// The rate an fp32 result can be had at, at most: the gate uses it, so
  /// that a kernel using tf32-based emulation is not rejected.
  double fp32_gate_flops() const {
    return fp32_flops > tf32_flops ? fp32_flops : tf32_flops;
  }
};

/// Returns the table's figures for a runtime model name such as "NVIDIA
/// H100 80GB HBM3" or "AMD Instinct MI300X", or nothing if unknown.
std::optional<gpu_peaks> tabled_peaks(std::string_view model);

/// A generous estimate for a model the table lacks: multiprocessors x clock
/// x 2 FLOP x 1024 (about a tensor-core rate), so that the gate never
/// rejects a real kernel on an unknown GPU.
double estimated_peak_flops(int multiprocessors, int clock_khz);

/// Measures device-to-device copy bandwidth of GPU `index` of `backend`
/// ("cuda" or "hip"), counting bytes read plus bytes written.
caf::expected<double> measure_copy_bandwidth(
  std::string_view backend, int index);

/// Backend implementations (devices/cuda/cuda_bandwidth.cpp,
/// devices/hip/hip_bandwidth.cpp).
caf::expected<double> measure_cuda_copy_bandwidth(int index);
caf::expected<double> measure_hip_copy_bandwidth(int index);

} // namespace eat::devices
