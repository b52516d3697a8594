// Peak rates of GPUs for the speed-of-light gate and the device's
// capabilities: a table of vendor figures by model, which a short
// measurement of device-to-device copy bandwidth refines
// (measure_copy_bandwidth in devices/gpu_probe.hpp; the GPU device takes
// the measured bandwidth where it beats the table's). Table figures are
// dense (no sparsity), boost clocks, per device as the runtime shows it
// (one GCD of an MI250X or MI250, which HIP shows as a device each), and
// scaled to the units of a part of one (a MIG instance, an MI300
// partition). Pure lookups usable from any thread.

#pragma once

#include <optional>
#include <string>
#include <string_view>

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
/// H100 80GB HBM3" or "AMD Instinct MI300X", or nothing if unknown. Where
/// the device shows fewer `multiprocessors` (SMs, CUs) than the model has
/// (a MIG instance, an MI300 partition), its FLOP/s are scaled to them;
/// the bandwidth is the model's (a part may reach all of it).
std::optional<gpu_peaks> tabled_peaks(
  std::string_view model, int multiprocessors = 0);

/// A generous estimate for a model the table lacks: multiprocessors x clock
/// x 2 FLOP x 1024 (about a tensor-core rate), so that the gate never
/// rejects a real kernel on an unknown GPU.
double estimated_peak_flops(int multiprocessors, int clock_khz);

} // namespace eat::devices
