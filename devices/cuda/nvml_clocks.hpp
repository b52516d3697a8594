// Reads a GPU's clocks, temperature and clock-throttle reasons through NVML,
// loaded at run time with dlopen("libnvidia-ml.so.1") (never linked: a
// machine without the NVIDIA driver has no NVML, and that is not an error).
// Used by the CUDA runner before and after timing (cuda_api.cpp).
// One instance per runner; its thread only.

#pragma once

#include <string>

namespace eat::devices {

/// NVML, if this machine has it.
class nvml_clocks {
public:
  /// Loads and initialises NVML; on failure every snapshot says why.
  nvml_clocks();
  ~nvml_clocks();
  nvml_clocks(const nvml_clocks&) = delete;
  nvml_clocks& operator=(const nvml_clocks&) = delete;

  /// "SM 1980 MHz, memory 2619 MHz, 41 C, throttle reasons: none" for the
  /// GPU with UUID `uuid` ("GPU-..."), or "clocks not recorded: <why>".
  std::string snapshot(const std::string& uuid) const;

private:
  void* library_ = nullptr;
  bool initialised_ = false;
  std::string error_;
};

/// Names the bits of an NVML clocks-event (throttle) reason mask, e.g.
/// "sw_power_cap, hw_thermal_slowdown"; "none" for 0 (idle is ignored).
std::string throttle_reason_names(unsigned long long mask);

} // namespace eat::devices
