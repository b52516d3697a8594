#include "devices/gpu_peaks.hpp"

namespace eat::devices {

namespace {

/// One row: a substring of the runtime's model name, then TFLOP/s (fp32,
/// tf32 or XF32 matrix, bf16 dense), TB/s, and the SMs or CUs of the
/// whole device as its runtime shows it. More specific names first.
struct row {
  const char* match;
  const char* model;
  double fp32, tf32, bf16, tb_per_s;
  int units;
};

// Vendor data sheets (dense figures, boost clocks).
const row table[] = {
  {"GH200", "GH200", 67, 494, 989, 4.0, 132},
  {"H200 NVL", "H200 NVL", 60, 418, 835, 4.8, 132},
  {"H200", "H200 SXM", 67, 494, 989, 4.8, 132},
  {"H100 PCIe", "H100 PCIe", 51, 378, 756, 2.0, 114},
  {"H100 NVL", "H100 NVL", 60, 418, 835, 3.9, 132},
  {"H100", "H100 SXM", 67, 494, 989, 3.35, 132},
  {"B200", "B200", 75, 1100, 2250, 8.0, 148},
  {"A100-SXM4-40GB", "A100 SXM 40GB", 19.5, 156, 312, 1.555, 108},
  {"A100-PCIE-40GB", "A100 PCIe 40GB", 19.5, 156, 312, 1.555, 108},
  {"A100 80GB PCIe", "A100 PCIe 80GB", 19.5, 156, 312, 1.935, 108},
  {"A100", "A100 SXM 80GB", 19.5, 156, 312, 2.039, 108},
  {"L40S", "L40S", 91.6, 183, 362, 0.864, 142},
  {"L40", "L40", 90.5, 90.5, 181, 0.864, 142},
  {"L4", "L4", 30.3, 60, 121, 0.3, 58},
  {"A10G", "A10G", 31.2, 62.5, 125, 0.6, 80},
  {"A10", "A10", 31.2, 62.5, 125, 0.6, 72},
  {"RTX 4090", "GeForce RTX 4090", 82.6, 82.6, 165, 1.008, 128},
  {"RTX 3090", "GeForce RTX 3090", 35.6, 35.6, 71, 0.936, 82},
  {"V100", "V100", 15.7, 0, 125, 0.9, 80},
  // MI300X and MI300A: fp32 on the vector units, then XF32 on the matrix
  // units (until 2026-12-07 the columns held the fp64 vector and fp32
  // matrix rates, which would have rejected an XF32 GEMM as faster than
  // light).
  {"MI300X", "Instinct MI300X", 163.4, 653.7, 1307, 5.3, 304},
  {"MI300A", "Instinct MI300A", 122.6, 490.3, 980.6, 5.3, 228},
  // HIP shows each of an MI250X's or MI250's two dies (GCDs) as a device
  // of its own: half the package's figures (until 2026-12-07 the
  // package's, so the gate allowed twice the speed of light).
  {"MI250X", "Instinct MI250X (one GCD)", 23.9, 47.9, 191.5, 1.6, 110},
  {"MI250", "Instinct MI250 (one GCD)", 22.6, 45.3, 181, 1.6, 104},
  {"MI210", "Instinct MI210", 22.6, 45.3, 181, 1.6, 104},
  {"MI100", "Instinct MI100", 23.1, 46.1, 92.3, 1.23, 120},
};

} // namespace

std::optional<gpu_peaks> tabled_peaks(
  std::string_view model, int multiprocessors) {
  for (const auto& r : table) {
    if (model.find(r.match) == std::string_view::npos)
      continue;
    // A part of the device (a MIG instance, an MI300 partition) shows
    // fewer units under the same name: its FLOP/s in proportion.
    auto share = multiprocessors > 0 && multiprocessors < r.units
                   ? static_cast<double>(multiprocessors) / r.units
                   : 1.0;
    gpu_peaks p{r.model, share * r.fp32 * 1e12, share * r.tf32 * 1e12,
      share * r.bf16 * 1e12, r.tb_per_s * 1e12};
    if (share < 1)
      p.model += " (" + std::to_string(multiprocessors) + " of "
                 + std::to_string(r.units) + " units)";
    return p;
  }
  return std::nullopt;
}

double estimated_peak_flops(int multiprocessors, int clock_khz) {
  auto clock_hz = clock_khz > 0 ? clock_khz * 1e3 : 2.5e9;
  auto sms = multiprocessors > 0 ? multiprocessors : 256;
  return sms * clock_hz * 2 * 1024;
}

} // namespace eat::devices
