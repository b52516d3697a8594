// What the GPU runtimes say about this machine's GPUs: the answers of
// devices/gpu_discovery.hpp, which asks the backends' runners. Plain
// values; no CUDA, HIP or CAF header, so that the runners' nvcc- and
// hipcc-compiled probes include it too.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eat::devices {

/// One GPU as its runtime describes it.
struct gpu_info {
  /// "cuda" or "hip".
  std::string backend;
  int index = 0;
  std::string name;
  /// "sm_90" (CUDA) or "gfx942" (HIP).
  std::string arch;
  /// Stable identity: the UUID (CUDA) or PCI bus id (HIP).
  std::string uuid;
  uint64_t memory_bytes = 0;
  int multiprocessors = 0;
  /// Peak clock in kHz, 0 when the runtime does not say.
  int clock_khz = 0;
};

/// The GPUs of one backend, or why there are none.
struct gpu_probe_result {
  /// Whether this eat was built with the backend's toolkit.
  bool built = false;
  std::vector<gpu_info> devices;
  /// Driver and runtime versions, e.g. "driver 13000, runtime 13000".
  std::string versions;
  /// Why no device can be used (no driver, no device); empty otherwise.
  std::string error;
};

/// Result of running a known kernel on one GPU and checking its output.
struct gpu_health {
  bool ok = false;
  /// What failed, e.g. "kernel launch: cudaErrorNoKernelImageForDevice".
  std::string detail;
};

/// Whether code built for the architectures `targets` (comma-separated,
/// "gfx90a,gfx942") runs on an AMD GPU whose `gcnArchName` is `arch`
/// ("gfx942:sramecc+:xnack-": the name before the first colon counts).
/// The HIP runner's own kernels (health check, input redraw) exist only for
/// the architectures its hipcc could target (cmake/Gpu.cmake).
inline bool hip_built_for(const std::string& arch, const std::string& targets) {
  auto base = arch.substr(0, arch.find(':'));
  if (base.empty())
    return false;
  for (size_t from = 0; from <= targets.size();) {
    auto to = targets.find(',', from);
    if (to == std::string::npos)
      to = targets.size();
    if (targets.compare(from, to - from, base) == 0 && to - from == base.size())
      return true;
    from = to + 1;
  }
  return false;
}

} // namespace eat::devices
