#include "devices/gpu_peaks.hpp"

namespace eat::devices {

namespace {

/// One row: a substring of the runtime's model name, then TFLOP/s (fp32,
/// tf32 or fp32 matrix, bf16 dense) and TB/s. More specific names first.
struct row {
  const char* match;
  const char* model;
  double fp32, tf32, bf16, tb_per_s;
};

// Vendor data sheets (dense figures, boost clocks).
const row table[] = {
  {"GH200", "GH200", 67, 494, 989, 4.0},
  {"H200 NVL", "H200 NVL", 60, 418, 835, 4.8},
  {"H200", "H200 SXM", 67, 494, 989, 4.8},
  {"H100 PCIe", "H100 PCIe", 51, 378, 756, 2.0},
  {"H100 NVL", "H100 NVL", 60, 418, 835, 3.9},
  {"H100", "H100 SXM", 67, 494, 989, 3.35},
  {"B200", "B200", 75, 1100, 2250, 8.0},
  {"A100-SXM4-40GB", "A100 SXM 40GB", 19.5, 156, 312, 1.555},
  {"A100-PCIE-40GB", "A100 PCIe 40GB", 19.5, 156, 312, 1.555},
  {"A100 80GB PCIe", "A100 PCIe 80GB", 19.5, 156, 312, 1.935},
  {"A100", "A100 SXM 80GB", 19.5, 156, 312, 2.039},
  {"L40S", "L40S", 91.6, 183, 362, 0.864},
  {"L40", "L40", 90.5, 90.5, 181, 0.864},
  {"L4", "L4", 30.3, 60, 121, 0.3},
  {"A10G", "A10G", 31.2, 62.5, 125, 0.6},
  {"A10", "A10", 31.2, 62.5, 125, 0.6},
  {"RTX 4090", "GeForce RTX 4090", 82.6, 82.6, 165, 1.008},
  {"RTX 3090", "GeForce RTX 3090", 35.6, 35.6, 71, 0.936},
  {"V100", "V100", 15.7, 0, 125, 0.9},
  {"MI300X", "Instinct MI300X", 81.7, 163.4, 1307, 5.3},
  {"MI300A", "Instinct MI300A", 122.6, 122.6, 980.6, 5.3},
  {"MI250X", "Instinct MI250X", 47.9, 95.7, 383, 3.2},
  {"MI250", "Instinct MI250", 45.3, 90.5, 362, 3.2},
  {"MI210", "Instinct MI210", 22.6, 45.3, 181, 1.6},
  {"MI100", "Instinct MI100", 23.1, 46.1, 92.3, 1.23},
};

} // namespace

std::optional<gpu_peaks> tabled_peaks(std::string_view model) {
  for (const auto& r : table)
    if (model.find(r.match) != std::string_view::npos)
      return gpu_peaks{r.model, r.fp32 * 1e12, r.tf32 * 1e12, r.bf16 * 1e12,
        r.tb_per_s * 1e12};
  return std::nullopt;
}

double estimated_peak_flops(int multiprocessors, int clock_khz) {
  auto clock_hz = clock_khz > 0 ? clock_khz * 1e3 : 2.5e9;
  auto sms = multiprocessors > 0 ? multiprocessors : 256;
  return sms * clock_hz * 2 * 1024;
}

} // namespace eat::devices
