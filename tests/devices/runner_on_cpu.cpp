// make_gpu_api() of eat-test-cuda-runner-on-cpu and
// eat-test-hip-runner-on-cpu: devices/gpu_runner/main.cpp linked with the
// host-memory gpu_api (tests/devices/host_gpu_api.hpp) instead of cudart or
// the HIP runtime, answering as backend EAT_TEST_RUNNER_BACKEND. With
// eat-test-nvcc-on-cpu as the compiler, a CUDA or HIP device runs whole on
// the CPU (docs/harness.md, "A GPU device on the CPU").

#include <memory>

#include "tests/devices/host_gpu_api.hpp"

namespace eat::devices {

std::unique_ptr<gpu_api> make_gpu_api() {
  return std::make_unique<test::host_gpu_api>(EAT_TEST_RUNNER_BACKEND);
}

} // namespace eat::devices
