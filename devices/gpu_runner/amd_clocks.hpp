// Reads an AMD GPU's clocks and temperature from the amdgpu driver's sysfs
// files, for the HIP runner's record before and after timing (hip_api.cpp),
// as nvml_clocks does for the CUDA runner: pp_dpm_sclk and pp_dpm_mclk (the
// levels of the shader and memory clocks, the current one marked "*") and
// the hwmon temperatures of the GPU's PCI device. No ROCm SMI: Debian ships
// 5.2, whose structures later releases changed, and the files are what it
// reads itself. Throttle reasons are not read: amdgpu gives them only in
// gpu_metrics, whose binary layout differs by GPU generation.

#pragma once

#include <string>

namespace eat::devices {

/// "SCLK 2100 MHz, MCLK 1300 MHz, 45 C (edge)" for the GPU at PCI address
/// `pci` ("0000:c1:00.0") under `sysfs` (the machine's /sys, or a tree of
/// its layout): what cannot be read is left out, and where nothing could
/// be, "clocks not recorded: <why>". Ends with "; throttle reasons not read".
std::string amd_clock_snapshot(
  const std::string& pci, const std::string& sysfs = "/sys");

/// The marked level of a pp_dpm_* file, in MHz ("0: 500Mhz\n1: 2100Mhz *\n"
/// gives 2100); -1 where no line is marked or the marked one has no
/// figure.
long current_dpm_mhz(const std::string& text);

} // namespace eat::devices
