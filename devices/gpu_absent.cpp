// The backends of gpu_probe.hpp that this eat was built without: they say so
// instead of pretending there is no device. EAT_HAVE_CUDA / EAT_HAVE_HIP come
// from cmake/Gpu.cmake.

#include "devices/gpu_probe.hpp"

namespace eat::devices {

#if !EAT_HAVE_CUDA
gpu_probe_result probe_cuda() {
  gpu_probe_result out;
  out.error = "eat was built without CUDA (nvcc was not found when it was "
              "configured; see EAT_ENABLE_CUDA)";
  return out;
}

gpu_health check_cuda(int) {
  return {false, probe_cuda().error};
}
#endif

#if !EAT_HAVE_HIP
gpu_probe_result probe_hip() {
  gpu_probe_result out;
  out.error = "eat was built without HIP (hipcc was not found when it was "
              "configured; install it with EAT_WITH_HIP=1 "
              "scripts/install-deps.sh)";
  return out;
}

gpu_health check_hip(int) {
  return {false, probe_hip().error};
}
#endif

} // namespace eat::devices
